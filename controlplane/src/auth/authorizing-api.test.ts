import { api, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import type { CallContext } from "../api/persys-api.js";
import { AGENT_CONTROL_RULES, PERSYS_API_RULES } from "./api-permissions.js";
import { Authenticator } from "./authenticator.js";
import { authorizeApi } from "./authorizing-api.js";
import type { CallCredentials, Principal } from "./principal.js";
import { RequestAudit } from "./request-audit.js";
import { DEFAULT_SPEC_POLICY } from "./spec-policy.js";

type Calls = { method: string; ctx: CallContext }[];

/** A core whose every method records the call and answers `{}` (streams yield one item). */
function recordingCore(rules: Record<string, { stream?: boolean }>, calls: Calls) {
  const core: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(rules)) {
    core[name] = rule.stream
      ? (_r: unknown, ctx: CallContext) =>
          (async function* () {
            calls.push({ method: name, ctx });
            yield {};
          })()
      : async (_r: unknown, ctx: CallContext) => {
          calls.push({ method: name, ctx });
          return {};
        };
  }
  return core;
}

const cert = (name: string, role: string): CallCredentials => ({
  certificate: { commonName: name, organization: role },
});
const ctx = (credentials?: CallCredentials): CallContext => ({
  signal: new AbortController().signal,
  requestId: "r1",
  ...(credentials ? { credentials } : {}),
});

function setup(options: { anonymous?: boolean } = {}) {
  const calls: Calls = [];
  const events: { message: string; attributes?: Record<string, string> }[] = [];
  const audit = new RequestAudit({ record: async (e) => (events.push(e as never), undefined) });
  const authenticator = new Authenticator({
    allowAnonymous: options.anonymous ?? false,
    tokens: {
      verify: async (token: string): Promise<Principal> => {
        if (token === "good") return { name: "ci", role: "viewer", via: "token" };
        throw new PersysError("UNAUTHENTICATED", "bearer token refused: unknown or revoked token");
      },
    },
  });
  const deps = { authenticator, audit, specPolicy: DEFAULT_SPEC_POLICY };
  const persys = authorizeApi(recordingCore(PERSYS_API_RULES, calls) as never, PERSYS_API_RULES, {
    ...deps,
    service: "persys.api.v1",
    workloadsOf: (m, r) =>
      m === "applyWorkload" ? [{ workload: (r as api.ApplyWorkloadRequest).workload, path: "" }] : [],
  }) as unknown as Record<string, (r: unknown, c: CallContext) => Promise<unknown> | AsyncIterable<unknown>>;
  const agentControl = authorizeApi(recordingCore(AGENT_CONTROL_RULES, calls) as never, AGENT_CONTROL_RULES, {
    ...deps,
    service: "persys.control.v1.AgentControl",
  }) as unknown as Record<string, (r: unknown, c: CallContext) => Promise<unknown>>;
  return { calls, events, persys, agentControl };
}

async function failure(p: Promise<unknown> | AsyncIterable<unknown>): Promise<PersysError> {
  const run =
    Symbol.asyncIterator in (p as object)
      ? (async () => {
          for await (const _ of p as AsyncIterable<unknown>) return;
        })()
      : (p as Promise<unknown>);
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof PersysError)) throw new Error(`expected a PersysError, got ${String(error)}`);
  return error;
}

const container = (c: Partial<api.ContainerSpec>): api.ApplyWorkloadRequest =>
  api.ApplyWorkloadRequest.fromPartial({
    workload: {
      id: "web",
      spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "busybox", ...c }) },
    },
  });

describe("authorisation of every API method", () => {
  it("refuses a call without credentials with UNAUTHENTICATED, on reads and streams too, and audits it", async () => {
    const { persys, calls, events } = setup();
    expect((await failure(persys.listWorkloads!({}, ctx()))).code).toBe("UNAUTHENTICATED");
    expect((await failure(persys.watchEvents!({}, ctx()))).code).toBe("UNAUTHENTICATED");
    expect(calls).toEqual([]);
    expect(events[0]?.message).toBe("unauthenticated caller called persys.api.v1/listWorkloads: UNAUTHENTICATED");
  });

  it("lets a viewer read but not apply, naming the role it lacks", async () => {
    const { persys, calls } = setup();
    await persys.listWorkloads!({}, ctx(cert("vera", "viewer")));
    const denied = await failure(persys.applyWorkload!(container({}), ctx(cert("vera", "viewer"))));
    expect(denied.code).toBe("PERMISSION_DENIED");
    expect(denied.message).toBe("vera (viewer) may not call persys.api.v1/applyWorkload: it needs operator or admin");
    expect(calls.map((c) => c.method)).toEqual(["listWorkloads"]);
  });

  it("passes the principal to the core and audits mutations with who and result", async () => {
    const { persys, calls, events } = setup();
    await persys.applyWorkload!(container({}), ctx(cert("olga", "operator")));
    expect(calls[0]?.ctx.principal).toEqual({ name: "olga", role: "operator", via: "certificate" });
    expect(calls[0]?.ctx.identity).toBe("olga");
    expect(events.at(-1)?.attributes).toMatchObject({
      who: "olga",
      role: "operator",
      method: "persys.api.v1/applyWorkload",
      result: "OK",
    });
  });

  it("accepts a valid bearer token and refuses a bad one", async () => {
    const { persys } = setup();
    await expect(persys.getClusterSummary!({}, ctx({ bearerToken: "good" }))).resolves.toEqual({});
    expect((await failure(persys.getClusterSummary!({}, ctx({ bearerToken: "bad" })))).code).toBe("UNAUTHENTICATED");
  });

  it("refuses a certificate whose organization is no role", async () => {
    const { persys } = setup();
    const error = await failure(persys.listNodes!({}, ctx(cert("mallory", "staff"))));
    expect(error.code).toBe("UNAUTHENTICATED");
  });

  it("lets an agent heartbeat only for its own node", async () => {
    const { agentControl, calls } = setup();
    await agentControl.heartbeat!({ nodeId: "n1" }, ctx(cert("node:n1", "agent")));
    const denied = await failure(agentControl.heartbeat!({ nodeId: "n2" }, ctx(cert("node:n1", "agent"))));
    expect(denied.code).toBe("PERMISSION_DENIED");
    expect(denied.message).toContain("may only act for node n1, not n2");
    expect((await failure(agentControl.applyWorkload!({}, ctx(cert("node:n1", "agent"))))).code).toBe(
      "PERMISSION_DENIED",
    );
    expect(calls.map((c) => c.method)).toEqual(["heartbeat"]);
  });

  it("an agent certificate cannot use the public API's mutations", async () => {
    const { persys } = setup();
    expect((await failure(persys.deleteWorkload!({ workloadId: "web" }, ctx(cert("node:n1", "agent"))))).code).toBe(
      "PERMISSION_DENIED",
    );
  });

  it("calls without credentials act as anonymous admin only on an insecure development server", async () => {
    const { persys, calls } = setup({ anonymous: true });
    await persys.applyWorkload!(container({}), ctx());
    expect(calls[0]?.ctx.principal).toEqual({ name: "anonymous", role: "admin", via: "development" });
    expect((await failure(persys.listNodes!({}, ctx({ bearerToken: "bad" })))).code).toBe("UNAUTHENTICATED");
  });
});

describe("policy for dangerous specs", () => {
  it.each([
    [
      "a host-path mount of /etc",
      { volumes: [{ source: { $case: "hostPath" as const, value: "/etc" }, containerPath: "/x", readOnly: false }] },
      "container.volumes[0].hostPath",
    ],
    [
      "a .. escape from the allow-list",
      {
        volumes: [
          { source: { $case: "hostPath" as const, value: "/srv/../etc" }, containerPath: "/x", readOnly: false },
        ],
      },
      "container.volumes[0].hostPath",
    ],
    ["a privileged container", { privileged: true }, "container.privileged"],
    ["the host network", { hostNetwork: true }, "container.hostNetwork"],
    ["a host device", { devices: ["/dev/kvm"] }, "container.devices[0]"],
  ])("refuses %s by an operator with PERMISSION_DENIED naming the field", async (_name, spec, path) => {
    const { persys, calls } = setup();
    const error = await failure(persys.applyWorkload!(container(spec), ctx(cert("olga", "operator"))));
    expect(error.code).toBe("PERMISSION_DENIED");
    expect(error.details.map((d) => d.path)).toEqual([path]);
    expect(calls).toEqual([]);
  });

  it("lets an operator mount inside the allow-list and an admin outside it", async () => {
    const { persys, calls } = setup();
    const srv = container({
      volumes: [{ source: { $case: "hostPath", value: "/srv/web" }, containerPath: "/x", readOnly: true }],
    });
    await persys.applyWorkload!(srv, ctx(cert("olga", "operator")));
    const etc = container({
      volumes: [{ source: { $case: "hostPath", value: "/etc" }, containerPath: "/x", readOnly: true }],
      privileged: true,
    });
    await persys.applyWorkload!(etc, ctx(cert("ada", "admin")));
    expect(calls).toHaveLength(2);
  });

  it("checks inline compose services: privileged, host network and bind mounts", async () => {
    const { persys } = setup();
    const yaml =
      "services:\n  app:\n    image: busybox\n    privileged: true\n    network_mode: host\n    volumes:\n      - /etc:/host-etc\n";
    const request = api.ApplyWorkloadRequest.fromPartial({
      workload: { id: "stack", spec: { $case: "compose", value: { source: { $case: "inlineYaml", value: yaml } } } },
    });
    const error = await failure(persys.applyWorkload!(request, ctx(cert("olga", "operator"))));
    expect(error.details.map((d) => d.path)).toEqual([
      "compose.inlineYaml.services.app.privileged",
      "compose.inlineYaml.services.app.network_mode",
      "compose.inlineYaml.services.app.volumes[0]",
    ]);
  });
});
