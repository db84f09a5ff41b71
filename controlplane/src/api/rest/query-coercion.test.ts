import { describe, expect, it } from "vitest";
import { coerceQuery } from "./query-coercion.js";

const schema = {
  type: "object",
  properties: {
    pageSize: { type: "integer" },
    follow: { type: "boolean" },
    types: { type: "array", items: { type: "string" } },
    revision: { type: ["integer", "string"] },
    name: { type: "string" },
  },
};

describe("coerceQuery", () => {
  it.each([
    { name: "integers", query: { pageSize: "25" }, want: { pageSize: 25 } },
    { name: "a non-number stays for validation to refuse", query: { pageSize: "ten" }, want: { pageSize: "ten" } },
    { name: "booleans", query: { follow: "false" }, want: { follow: false } },
    { name: "a bare flag is true", query: { follow: "" }, want: { follow: true } },
    { name: "a single value becomes a list", query: { types: "a" }, want: { types: ["a"] } },
    { name: "a repeated value stays a list", query: { types: ["a", "b"] }, want: { types: ["a", "b"] } },
    { name: "the last of a repeated scalar wins", query: { pageSize: ["1", "2"] }, want: { pageSize: 2 } },
    {
      name: "int64 stays a decimal string",
      query: { revision: "9007199254740993" },
      want: { revision: "9007199254740993" },
    },
    { name: "strings are never converted", query: { name: "007" }, want: { name: "007" } },
    { name: "unknown keys pass for validation to name", query: { bogus: "1" }, want: { bogus: "1" } },
  ])("$name", ({ query, want }) => {
    expect(coerceQuery(query, schema)).toEqual(want);
  });
});
