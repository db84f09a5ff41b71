import { describe, expect, it } from "vitest";
import { age, renderFields, renderRows, renderTable } from "./table.js";

describe("renderTable", () => {
  it("aligns columns by their widest cell, three spaces apart, without trailing spaces", () => {
    expect(
      renderTable(
        ["NAME", "STATE"],
        [
          ["web", "running"],
          ["database", ""],
        ],
      ),
    ).toBe("NAME       STATE\nweb        running\ndatabase\n");
  });

  it("does not count colour codes in the width", () => {
    const red = "\u001b[31mfailed\u001b[39m";
    const lines = renderTable(
      ["STATE", "AGE"],
      [
        [red, "1s"],
        ["running", "2s"],
      ],
    ).split("\n");
    expect(lines[1]).toBe(`${red}    1s`);
    expect(lines[2]).toBe("running   2s");
  });

  it("prints rows without the header for watch updates", () => {
    expect(renderRows(["NAME", "STATE"], [["web", "running"]])).toBe("web    running\n");
  });

  it("aligns describe fields", () => {
    expect(
      renderFields([
        ["Name", "web"],
        ["Revision", "abc"],
      ]),
    ).toBe("Name:      web\nRevision:  abc\n");
  });
});

describe("age", () => {
  const now = new Date("2026-01-10T12:00:00Z");
  it.each([
    { ago: 5_000, want: "5s" },
    { ago: 119_000, want: "119s" },
    { ago: 120_000, want: "2m" },
    { ago: 3 * 3_600_000, want: "3h" },
    { ago: 50 * 3_600_000, want: "2d" },
    { ago: -5_000, want: "0s" },
  ])("$ago ms ago is $want", ({ ago, want }) => {
    expect(age(new Date(now.getTime() - ago), now)).toBe(want);
  });

  it("is <unknown> without a time", () => {
    expect(age(undefined, now)).toBe("<unknown>");
  });
});
