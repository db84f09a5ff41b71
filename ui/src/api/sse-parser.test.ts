import { describe, expect, it } from "vitest";
import { SseParser } from "./sse-parser.js";

describe("SseParser", () => {
  const cases: { name: string; chunks: string[]; events: { event: string; data: string; id?: string }[] }[] = [
    { name: "one event", chunks: ["data: {}\n\n"], events: [{ event: "message", data: "{}" }] },
    {
      name: "id and data, as the watches send them",
      chunks: ['id: 42\ndata: {"a":1}\n\n'],
      events: [{ event: "message", data: '{"a":1}', id: "42" }],
    },
    {
      name: "split anywhere, even inside a field name",
      chunks: ["da", "ta: x", "y\n", "\nid", ": 7\ndata: z\n\n"],
      events: [
        { event: "message", data: "xy" },
        { event: "message", data: "z", id: "7" },
      ],
    },
    { name: "comments and heartbeats are dropped", chunks: [": stream open\n\n: heartbeat\n\n"], events: [] },
    {
      name: "named error event",
      chunks: ['event: error\ndata: {"code":"COMPACTED"}\n\n'],
      events: [{ event: "error", data: '{"code":"COMPACTED"}' }],
    },
    {
      name: "multi-line data is joined with newlines",
      chunks: ["data: a\ndata: b\n\n"],
      events: [{ event: "message", data: "a\nb" }],
    },
    {
      name: "CRLF line ends, split between CR and LF",
      chunks: ["data: a\r", "\n\r\n"],
      events: [{ event: "message", data: "a" }],
    },
    { name: "no space after the colon", chunks: ["data:x\n\n"], events: [{ event: "message", data: "x" }] },
    { name: "an event without data is not dispatched", chunks: ["id: 3\n\n"], events: [] },
    { name: "an unfinished event waits for its blank line", chunks: ["data: a\n"], events: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const parser = new SseParser();
      const out = c.chunks.flatMap((chunk) => parser.push(chunk));
      expect(out).toEqual(c.events);
    });
  }

  it("remembers the last event id for Last-Event-ID", () => {
    const parser = new SseParser();
    parser.push("id: 1\ndata: a\n\nid: 2\ndata: b\n\ndata: c\n\n");
    expect(parser.lastEventId).toBe("2");
  });
});
