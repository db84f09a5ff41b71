import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { defaultPipeline } from "../default-pipeline.js";
import { measuredUtilisation } from "../plugins/measured-utilisation-score.js";
import { nodeReady } from "../plugins/node-ready.js";
import { definePipeline } from "./pipeline.js";
import { scoreWith } from "./plugin.js";

describe("pipeline", () => {
  it("lists the default plugins in one order, top to bottom", () => {
    const p = defaultPipeline();
    expect(p.stages.map((s) => (s.scope === "score" ? `score:${s.scorer.name}` : `${s.scope}:${s.name}`))).toEqual([
      "static:node-ready",
      "static:runtime-capability",
      "static:node-affinity",
      "node:topology-spread",
      "node:resources-fit",
      "node:host-ports",
      "node:replica-anti-affinity",
      "node:workload-anti-affinity",
      "node:replica-move",
      "score:least-allocated",
      "score:topology-spread",
      "score:replica-spread",
      "score:preferred-affinity",
      "score:measured-utilisation",
    ]);
  });

  it("uses the strategy and drops scorers weighted 0", () => {
    const p = defaultPipeline({ strategy: "bin-pack", weights: { measuredUtilisation: 0, preferredAffinity: 5 } });
    expect(p.scorers.map((s) => [s.scorer.name, s.weight])).toEqual([
      ["bin-pack", 1],
      ["topology-spread", 2],
      ["replica-spread", 2],
      ["preferred-affinity", 5],
    ]);
  });

  it.each([
    { name: "a duplicate filter name", stages: () => [nodeReady(), nodeReady()] },
    { name: "a negative weight", stages: () => [scoreWith(measuredUtilisation(), -1)] },
    { name: "a weight that is not a number", stages: () => [scoreWith(measuredUtilisation(), Number.NaN)] },
  ])("rejects $name with INVALID_CONFIG", ({ stages }) => {
    expect(() => definePipeline(stages())).toThrow(PersysError);
    try {
      definePipeline(stages());
    } catch (e) {
      expect((e as PersysError).code).toBe("INVALID_CONFIG");
    }
  });
});
