import { describe, expect, it } from "vitest";
import { Workload } from "../gen/persys/api/v1/workload.js";
import { withDefaults } from "./workload-defaults.js";
import { defaultedWorkloadRevision, workloadRevision } from "./workload-revision.js";

const base = {
  id: "web",
  container: { image: "persys-test/web:1", env: { A: "1", B: "2" }, ports: [{ containerPort: 8080 }] },
};
const revision = (json: object) => workloadRevision(Workload.fromJSON(json));

describe("workloadRevision", () => {
  it("is stable for the same spec and ignores written-out defaults and map order", () => {
    const explicit = {
      ...base,
      kind: "WORKLOAD_KIND_CONTAINER",
      replicas: 1,
      desiredState: "DESIRED_STATE_RUNNING",
      container: {
        ...base.container,
        env: { B: "2", A: "1" },
        ports: [{ containerPort: 8080, protocol: "PROTOCOL_TCP" }],
      },
    };
    expect(revision(explicit)).toBe(revision(base));
    expect(revision(base)).toMatch(/^[0-9a-f]{16}$/);
  });

  it("is the same computed from an already defaulted workload", () => {
    for (const json of [base, { ...base, resources: { memoryMib: 64 } }, { id: "db", vm: { vcpus: 2 } }]) {
      const w = Workload.fromJSON(json);
      expect(defaultedWorkloadRevision(withDefaults(w))).toBe(workloadRevision(w));
    }
  });

  it.each([
    ["scaling", { replicas: 5 }],
    ["stopping", { desiredState: "DESIRED_STATE_STOPPED" }],
    ["relabelling", { labels: { tier: "x" } }],
  ])("does not change when %s", (_, patch) => {
    expect(revision({ ...base, ...patch })).toBe(revision(base));
  });

  it.each([
    ["the image", { container: { ...base.container, image: "persys-test/web:2" } }],
    ["an env value", { container: { ...base.container, env: { A: "1", B: "3" } } }],
    ["resources", { resources: { memoryMib: 64 } }],
    ["placement", { placement: { nodeSelector: { zone: "a" } } }],
  ])("changes when %s changes", (_, patch) => {
    expect(revision({ ...base, ...patch })).not.toBe(revision(base));
  });

  it("makes defaults explicit idempotently", () => {
    const once = withDefaults(Workload.fromJSON(base));
    expect(withDefaults(once)).toEqual(once);
    expect(once.replicas).toBe(1);
  });
});
