import { api } from "@persys/schema";
import { describe, expect, it } from "vitest";
import {
  enumLabel,
  enumMemberNames,
  enumPrefix,
  friendlyEnumNames,
  parseEnum,
  resolveEnumName,
} from "./friendly-enums.js";

describe("friendly enum spellings", () => {
  it.each([
    { name: "kind", values: api.WorkloadKind, spelling: "container", want: api.WorkloadKind.WORKLOAD_KIND_CONTAINER },
    {
      name: "full name",
      values: api.WorkloadKind,
      spelling: "WORKLOAD_KIND_VM",
      want: api.WorkloadKind.WORKLOAD_KIND_VM,
    },
    {
      name: "kebab-case",
      values: api.RestartPolicyMode,
      spelling: "on-failure",
      want: api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE,
    },
    {
      name: "snake_case",
      values: api.RestartPolicyMode,
      spelling: "unless_stopped",
      want: api.RestartPolicyMode.RESTART_POLICY_MODE_UNLESS_STOPPED,
    },
    {
      name: "Kubernetes CamelCase",
      values: api.LabelOperator,
      spelling: "NotIn",
      want: api.LabelOperator.LABEL_OPERATOR_NOT_IN,
    },
    {
      name: "DoesNotExist",
      values: api.LabelOperator,
      spelling: "DoesNotExist",
      want: api.LabelOperator.LABEL_OPERATOR_DOES_NOT_EXIST,
    },
    { name: "upper case", values: api.Protocol, spelling: "UDP", want: api.Protocol.PROTOCOL_UDP },
    {
      name: "desired state",
      values: api.DesiredState,
      spelling: "stopped",
      want: api.DesiredState.DESIRED_STATE_STOPPED,
    },
    { name: "unknown", values: api.Protocol, spelling: "sctp", want: undefined },
    { name: "UNSPECIFIED only by its full name", values: api.Protocol, spelling: "unspecified", want: undefined },
    {
      name: "UNSPECIFIED by its full name",
      values: api.Protocol,
      spelling: "PROTOCOL_UNSPECIFIED",
      want: api.Protocol.PROTOCOL_UNSPECIFIED,
    },
  ])("$name: $spelling", ({ values, spelling, want }) => {
    expect(parseEnum(values, spelling)).toBe(want);
  });

  it.each([
    { values: api.WorkloadState, value: api.WorkloadState.WORKLOAD_STATE_RUNNING, want: "running" },
    { values: api.NodeState, value: api.NodeState.NODE_STATE_NOT_READY, want: "not-ready" },
    { values: api.LabelOperator, value: api.LabelOperator.LABEL_OPERATOR_DOES_NOT_EXIST, want: "does-not-exist" },
    { values: api.WorkloadState, value: 99, want: "99" },
  ])("labels $value as $want", ({ values, value, want }) => {
    expect(enumLabel(values, value)).toBe(want);
  });

  it("finds the prefix from the zero value, else the common prefix", () => {
    expect(enumPrefix(enumMemberNames(api.WorkloadKind))).toBe("WORKLOAD_KIND_");
    expect(enumPrefix(["A_X_ONE", "A_X_TWO"])).toBe("A_X_");
    expect(enumPrefix(["ONE", "TWO"])).toBe("");
  });

  it("lists the friendly names without UNSPECIFIED, and every one resolves back", () => {
    const names = enumMemberNames(api.RestartPolicyMode);
    const friendly = friendlyEnumNames(names);
    expect(friendly).toEqual(["no", "always", "on-failure", "unless-stopped"]);
    for (const f of friendly) expect(resolveEnumName(names, f)).toMatch(/^RESTART_POLICY_MODE_/);
  });
});
