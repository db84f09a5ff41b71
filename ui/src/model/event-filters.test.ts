import { describe, expect, it } from "vitest";
import type { EventJson } from "../api/wire-types.js";
import { emptyEventFilter, filterEvents } from "./event-filters.js";

const events: EventJson[] = [
  { id: "1", type: "workload.applied", severity: "EVENT_SEVERITY_INFO", workloadId: "web" },
  {
    id: "2",
    type: "replica.failed",
    severity: "EVENT_SEVERITY_ERROR",
    workloadId: "web",
    nodeId: "n1",
    message: "exit 1",
  },
  { id: "3", type: "node.cordoned", severity: "EVENT_SEVERITY_WARNING", nodeId: "n2" },
];

describe("filterEvents", () => {
  it.each([
    ["all, newest first", {}, ["3", "2", "1"]],
    ["type substring", { type: "replica." }, ["2"]],
    ["warning and worse", { minSeverity: "EVENT_SEVERITY_WARNING" }, ["3", "2"]],
    ["workload", { workload: "web" }, ["2", "1"]],
    ["node", { node: "n2" }, ["3"]],
    ["message", { text: "EXIT" }, ["2"]],
  ])("%s", (_name, filter, ids) => {
    expect(filterEvents(events, { ...emptyEventFilter, ...filter }).map((e) => e.id)).toEqual(ids);
  });
});
