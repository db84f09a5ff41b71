import { describe, expect, it } from "vitest";
import { understand } from "./ask-question.js";

const names = { workloads: ["web", "db-main"], nodes: ["n1", "n2"] };

describe("understand", () => {
  it.each([
    { q: "why is web pending?", want: { intent: "diagnose", workloadId: "web" } },
    { q: "What's wrong with db-main", want: { intent: "diagnose", workloadId: "db-main" } },
    { q: "when does n1 run out of memory?", want: { intent: "forecast", nodeId: "n1" } },
    { q: "how much capacity is left?", want: { intent: "forecast" } },
    { q: "what should I change?", want: { intent: "recommend" } },
    { q: "should web be right-sized?", want: { intent: "recommend", workloadId: "web" } },
    { q: "is n2 ok", want: { intent: "forecast", nodeId: "n2" } },
    { q: "how is the cluster doing", want: { intent: "summary" } },
  ])("$q", ({ q, want }) => {
    expect(understand(q, names)).toEqual(want);
  });
});
