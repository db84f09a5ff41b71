import { describe, expect, it } from "vitest";
import { compileRequest } from "../framework/compiled-request.js";
import { makeNode, makeRequest } from "../simulation/node-builder.js";
import { NodeClassRegistry } from "../snapshot/node-classes.js";
import { nodeReady } from "./node-ready.js";

const filter = nodeReady();
const request = compileRequest(makeRequest("web"));

function reasonsFor(flags: { ready: boolean; cordoned: boolean; draining: boolean }): string[] {
  const cls = new NodeClassRegistry().classFor(makeNode("n1", flags));
  const mask = filter.check(cls, request);
  return filter.reasons.filter((_, i) => (mask >> i) & 1);
}

describe("node-ready filter", () => {
  it.each([
    { name: "ready and schedulable passes", flags: { ready: true, cordoned: false, draining: false }, want: [] },
    { name: "not ready", flags: { ready: false, cordoned: false, draining: false }, want: ["NODE_NOT_READY"] },
    { name: "cordoned", flags: { ready: true, cordoned: true, draining: false }, want: ["NODE_CORDONED"] },
    { name: "draining", flags: { ready: true, cordoned: false, draining: true }, want: ["NODE_DRAINING"] },
    {
      name: "every failing condition is reported, not only the first",
      flags: { ready: false, cordoned: true, draining: true },
      want: ["NODE_NOT_READY", "NODE_CORDONED", "NODE_DRAINING"],
    },
  ])("$name", ({ flags, want }) => {
    expect(reasonsFor(flags)).toEqual(want);
  });
});
