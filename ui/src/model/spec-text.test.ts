import { describe, expect, it } from "vitest";
import { exampleSpec, parseSpecText, specToYaml } from "./spec-text.js";

describe("parseSpecText", () => {
  const cases: { name: string; text: string; ok: boolean; message?: RegExp }[] = [
    { name: "the example (YAML)", text: exampleSpec, ok: true },
    { name: "JSON", text: '{"id":"x","kind":"WORKLOAD_KIND_CONTAINER"}', ok: true },
    { name: "a PlanWorkloadRequest", text: "workload:\n  id: x\n", ok: true },
    { name: "empty", text: "  ", ok: false, message: /empty/ },
    { name: "bad JSON", text: "{nope", ok: false, message: /Not valid JSON/ },
    { name: "bad YAML", text: "id: [x", ok: false, message: /Not valid YAML/ },
    { name: "a list", text: "- a\n- b\n", ok: false, message: /must be an object/ },
    { name: "no id", text: "kind: WORKLOAD_KIND_VM\n", ok: false, message: /needs an id/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const parsed = parseSpecText(c.text);
      expect(parsed.ok).toBe(c.ok);
      if (!parsed.ok && c.message) expect(parsed.message).toMatch(c.message);
    });
  }

  it("drops status and round-trips through specToYaml", () => {
    const parsed = parseSpecText(specToYaml({ id: "w", replicas: 2, status: { state: "WORKLOAD_STATE_RUNNING" } }));
    expect(parsed).toEqual({ ok: true, format: "yaml", workload: { id: "w", replicas: 2 } });
  });
});
