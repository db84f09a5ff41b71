import { describe, expect, it } from "vitest";
import { LogDemuxer, splitTimestamp } from "./log-lines.js";

const frame = (type: 1 | 2, text: string | Buffer) => {
  const payload = typeof text === "string" ? Buffer.from(text) : text;
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

describe("LogDemuxer", () => {
  it("splits frames into lines per stream with Docker's timestamps", () => {
    const d = new LogDemuxer();
    const out = d.push(
      Buffer.concat([
        frame(1, "2026-01-02T03:04:05.123456789Z hello\n"),
        frame(2, "2026-01-02T03:04:06Z oops\n2026-01-02T03:04:07Z again\n"),
      ]),
    );
    expect(out).toEqual([
      { stream: "stdout", time: new Date("2026-01-02T03:04:05.123Z"), line: "hello" },
      { stream: "stderr", time: new Date("2026-01-02T03:04:06Z"), line: "oops" },
      { stream: "stderr", time: new Date("2026-01-02T03:04:07Z"), line: "again" },
    ]);
  });

  it("keeps a frame split across chunks and a line split across frames (and a UTF-8 character) whole", () => {
    const d = new LogDemuxer();
    const euro = Buffer.from("€");
    const all = Buffer.concat([
      frame(1, Buffer.concat([Buffer.from("2026-01-02T03:04:05Z price 5"), euro.subarray(0, 1)])),
      frame(1, Buffer.concat([euro.subarray(1), Buffer.from("\n")])),
    ]);
    const lines = [];
    for (let i = 0; i < all.length; i += 5) lines.push(...d.push(all.subarray(i, i + 5)));
    expect(lines).toEqual([{ stream: "stdout", time: new Date("2026-01-02T03:04:05Z"), line: "price 5€" }]);
  });

  it("flushes an unterminated last line at the end", () => {
    const d = new LogDemuxer();
    expect(d.push(frame(1, "2026-01-02T03:04:05Z no newline"))).toEqual([]);
    expect(d.end()).toEqual([{ stream: "stdout", time: new Date("2026-01-02T03:04:05Z"), line: "no newline" }]);
  });

  it("reads a stream without frame headers (TTY) as stdout", () => {
    const d = new LogDemuxer();
    expect(d.push(Buffer.from("2026-01-02T03:04:05Z tty line\r\nmore"))).toEqual([
      { stream: "stdout", time: new Date("2026-01-02T03:04:05Z"), line: "tty line" },
    ]);
  });
});

describe("splitTimestamp", () => {
  it.each([
    { text: "2026-01-02T03:04:05Z x y", want: { time: new Date("2026-01-02T03:04:05Z"), line: "x y" } },
    { text: "2026-01-02T03:04:05+02:00 x", want: { time: new Date("2026-01-02T01:04:05Z"), line: "x" } },
    { text: "no timestamp here", want: { line: "no timestamp here" } },
    { text: "2026-01-02T03:04:05Z", want: { time: new Date("2026-01-02T03:04:05Z"), line: "" } },
  ])("$text", ({ text, want }) => {
    expect(splitTimestamp(text)).toEqual(want);
  });
});
