import { describe, expect, it } from "vitest";
import type { WorkloadJson } from "../api/wire-types.js";
import { emptyFilter, filterWorkloads, parseLabelTerms } from "./workload-filters.js";

const workloads: WorkloadJson[] = [
  {
    id: "web",
    kind: "WORKLOAD_KIND_CONTAINER",
    labels: { app: "web", tier: "front" },
    status: { state: "WORKLOAD_STATE_RUNNING", replicas: [{ index: 0, nodeId: "node-1" }] },
  },
  { id: "db", kind: "WORKLOAD_KIND_VM", labels: { app: "db" }, status: { state: "WORKLOAD_STATE_PENDING" } },
  {
    id: "api",
    kind: "WORKLOAD_KIND_CONTAINER",
    labels: { app: "api", canary: "" },
    status: { replicas: [{ nodeId: "node-2" }] },
  },
];

describe("filterWorkloads", () => {
  const cases: { name: string; filter: Partial<typeof emptyFilter>; ids: string[] }[] = [
    { name: "no filter: all, by id", filter: {}, ids: ["api", "db", "web"] },
    { name: "kind", filter: { kind: "WORKLOAD_KIND_VM" }, ids: ["db"] },
    { name: "state", filter: { state: "WORKLOAD_STATE_RUNNING" }, ids: ["web"] },
    { name: "state unspecified when there is none", filter: { state: "WORKLOAD_STATE_UNSPECIFIED" }, ids: ["api"] },
    { name: "node", filter: { node: "node-2" }, ids: ["api"] },
    { name: "label equality", filter: { label: "app=web" }, ids: ["web"] },
    { name: "label inequality", filter: { label: "app!=web" }, ids: ["api", "db"] },
    { name: "label exists / not", filter: { label: "canary" }, ids: ["api"] },
    { name: "label absent", filter: { label: "!canary, app in (web, db)" }, ids: ["db", "web"] },
    { name: "label notin", filter: { label: "app notin (web)" }, ids: ["api", "db"] },
    { name: "id substring", filter: { text: "E" }, ids: ["web"] },
    {
      name: "several filters all hold",
      filter: { kind: "WORKLOAD_KIND_CONTAINER", label: "tier=front" },
      ids: ["web"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(filterWorkloads(workloads, { ...emptyFilter, ...c.filter }).map((w) => w.id)).toEqual(c.ids);
    });
  }
});

describe("parseLabelTerms", () => {
  it("names a term it cannot read", () => {
    expect(parseLabelTerms("app=web, ==x").error).toBe('cannot read label term "==x"');
  });
  it("reads an empty text as no terms", () => {
    expect(parseLabelTerms(" ")).toEqual({ terms: [] });
  });
});
