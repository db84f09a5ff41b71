import { describe, expect, it } from "vitest";
import { rankLexically, tokens } from "./lexical-ranking.js";

describe("tokens", () => {
  it("keeps ids and codes whole and split", () => {
    expect(tokens("Node n2 lost: NODE_LOST for web-api")).toEqual([
      "node",
      "n2",
      "lost",
      "node_lost",
      "node",
      "lost",
      "web-api",
      "web",
      "api",
    ]);
  });
});

describe("rankLexically", () => {
  const events = [
    { id: "1", text: "replica 0 of db placed on n1" },
    { id: "2", text: "node n2 lost after 3 s NotReady; re-placing 1 workload(s)" },
    { id: "3", text: "replica 1 of web removed from n2: node lost; it is re-placed" },
    { id: "4", text: "leader elected" },
  ];
  it("puts the documents naming the query's workload and node first and drops the rest", () => {
    const ranked = rankLexically("web n2 lost", events, (e) => e.text);
    expect(ranked.map((r) => r.item.id)).toEqual(["3", "2"]);
  });
  it("applies boosts", () => {
    const ranked = rankLexically(
      "n2",
      events,
      (e) => e.text,
      (e) => (e.id === "2" ? 10 : 1),
    );
    expect(ranked[0]!.item.id).toBe("2");
  });
  it("answers nothing for an empty query", () => expect(rankLexically("the", events, (e) => e.text)).toEqual([]));
});
