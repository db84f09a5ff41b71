import { api, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { policyFromDocument } from "./policy-input.js";

describe("policyFromDocument", () => {
  it("reads a policy file: then: is the action, short enum names expand", () => {
    const policy = policyFromDocument(
      parse(`
id: web-autoscale
when: { metric: { workloadId: web, metric: cpu, threshold: 80 } }
then: { scale: { workloadId: web, step: 2, maxReplicas: 8 } }
approval: manual
`),
    );
    expect(policy.when?.trigger).toEqual({
      $case: "metric",
      value: expect.objectContaining({
        workloadId: "web",
        metric: api.PolicyMetric.POLICY_METRIC_CPU_PERCENT,
        threshold: 80,
      }),
    });
    expect(policy.action?.kind?.$case).toBe("scale");
    expect(policy.approval).toBe(api.PolicyApproval.POLICY_APPROVAL_MANUAL);
  });

  it.each([
    {
      name: "an unknown key",
      doc: { id: "p", when: { cron: "* * * * *" }, action: { restart: {} }, cooldown: 5 },
      paths: ["cooldown"],
    },
    {
      name: "two triggers",
      doc: { id: "p", when: { cron: "* * * * *", event: {} }, action: { restart: {} } },
      paths: ["when"],
    },
    { name: "no action", doc: { id: "p", when: { cron: "* * * * *" } }, paths: ["action"] },
    {
      name: "both then and action",
      doc: parse("{id: p, when: {cron: '* * * * *'}, then: {restart: {}}, action: {restart: {}}}"),
      paths: ["then"],
    },
  ])("rejects $name, naming the field", ({ doc, paths }) => {
    try {
      policyFromDocument(doc);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PersysError);
      expect((error as PersysError).details.map((d) => d.path)).toEqual(paths);
    }
  });
});
