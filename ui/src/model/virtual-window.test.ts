import { describe, expect, it } from "vitest";
import { chunk, virtualWindow } from "./virtual-window.js";

describe("virtualWindow", () => {
  it.each([
    ["top of a long list", 10_000, 0, { start: 0, end: 16, padTop: 0, padBottom: (10_000 - 16) * 40 }],
    [
      "scrolled into the middle",
      10_000,
      4000,
      { start: 94, end: 116, padTop: 94 * 40, padBottom: (10_000 - 116) * 40 },
    ],
    ["short list: everything", 5, 0, { start: 0, end: 5, padTop: 0, padBottom: 0 }],
    ["empty", 0, 0, { start: 0, end: 0, padTop: 0, padBottom: 0 }],
  ])("%s", (_name, count, scrollTop, expected) => {
    expect(virtualWindow(count, 40, scrollTop, 400)).toEqual(expected);
  });
});

describe("chunk", () => {
  it("splits into rows of columns", () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });
});
