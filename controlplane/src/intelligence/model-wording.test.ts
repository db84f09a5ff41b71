import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { inventedNames, type WordingInput, wordAnswer } from "./model-wording.js";

const recorded = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "testdata/chat-completion-web-pending.json"), "utf8"),
);

const input: WordingInput = {
  question: "why is web pending?",
  answer:
    "web is pending (1/2 ready): replica 1 pending since 12:03:10Z: 0/2 nodes are available: 1 insufficient memory, " +
    "1 node not ready; because node n2 was lost at 12:02:41Z; replica 1 was removed from it and must be re-placed. " +
    "Fix: freeing 1024 MiB of memory (512 free, needs 1536) on n1 would fit it. Evidence: event(s) 1764624161000-0.",
  findings: {
    diagnosis: { workloadId: "web", causes: [{ rule: "node-lost", evidence: [{ ref: "1764624161000-0" }] }] },
  },
  knownNames: ["web", "db", "n1", "n2", "n3"],
};

const endpoint = { url: "https://llm.example.test/v1", model: "gpt-4o-mini", apiKey: "sk-test" };

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

describe("wordAnswer", () => {
  it("uses the model's wording (mock OpenAI-compatible endpoint, recorded chat-completions response)", async () => {
    let sent: any;
    const scope = nock("https://llm.example.test", { reqheaders: { authorization: "Bearer sk-test" } })
      .post("/v1/chat/completions", (body) => {
        sent = body;
        return true;
      })
      .reply(200, recorded);
    const wording = await wordAnswer(endpoint, input);
    expect(scope.isDone()).toBe(true);
    expect(wording).toEqual({ text: recorded.choices[0].message.content, model: "gpt-4o-mini-2024-07-18" });
    expect(sent.model).toBe("gpt-4o-mini");
    expect(sent.temperature).toBe(0);
    expect(sent.messages[0].role).toBe("system");
    expect(sent.messages[0].content).toMatch(/Use only the facts/);
    expect(sent.messages[1].content).toContain(input.answer);
    expect(sent.messages[1].content).toContain('"ref":"1764624161000-0"');
  });

  it("discards a reworded answer naming a node the findings do not (mock endpoint)", async () => {
    const invented = structuredClone(recorded);
    invented.choices[0].message.content = "web is pending because n3 ran out of disk (event 1764624999000-0).";
    nock("https://llm.example.test").post("/v1/chat/completions").reply(200, invented);
    const wording = await wordAnswer(endpoint, input);
    expect(wording).toEqual({ rejected: "model answer names what the findings do not: 1764624999000-0, n3" });
  });

  it.each([
    {
      name: "HTTP 500 (mock endpoint)",
      reply: (s: nock.Interceptor) => s.reply(500, { error: { message: "overloaded" } }),
      want: /HTTP 500/,
    },
    {
      name: "no choices (mock endpoint)",
      reply: (s: nock.Interceptor) => s.reply(200, { ...recorded, choices: [] }),
      want: /no answer/,
    },
    {
      name: "connection reset (mock endpoint)",
      reply: (s: nock.Interceptor) => s.replyWithError("socket hang up"),
      want: /failed/,
    },
  ])("keeps the rules' answer on $name", async ({ reply, want }) => {
    reply(nock("https://llm.example.test").post("/v1/chat/completions"));
    const wording = await wordAnswer(endpoint, input);
    expect("rejected" in wording && wording.rejected).toMatch(want);
  });
});

describe("inventedNames", () => {
  it("accepts names and ids that the findings contain, whatever the sentence around them", () => {
    expect(inventedNames("n2 is gone (1764624161000-0); n1 is full; web waits", input)).toEqual([]);
  });
});
