import { describe, expect, it } from "vitest";
import { type SchemaValidationIssue, violationsOf } from "./validation-details.js";

const issue = (partial: Partial<SchemaValidationIssue>): SchemaValidationIssue => ({
  instancePath: "",
  keyword: "type",
  params: {},
  ...partial,
});

describe("violationsOf", () => {
  const data = { container: { ports: [{ hostPort: "x" }] }, labels: { "0": 5 } };
  it.each([
    {
      name: "array index in brackets, under the prefix",
      issue: issue({ instancePath: "/container/ports/0/hostPort", params: { type: "integer" } }),
      want: { path: "workload.container.ports[0].hostPort", reason: "must be an integer" },
    },
    {
      name: "a map key that looks like a number stays dotted",
      issue: issue({ instancePath: "/labels/0", params: { type: "string" } }),
      want: { path: "workload.labels.0", reason: "must be a string" },
    },
    {
      name: "unknown field names the field",
      issue: issue({
        instancePath: "/container",
        keyword: "additionalProperties",
        params: { additionalProperty: "imagee" },
      }),
      want: { path: "workload.container.imagee", reason: "unknown field" },
    },
    {
      name: "missing property",
      issue: issue({ keyword: "required", params: { missingProperty: "id" } }),
      want: { path: "workload.id", reason: "is required" },
    },
    {
      name: "enum lists the names",
      issue: issue({ instancePath: "/kind", keyword: "enum", params: { allowedValues: ["A", "B"] } }),
      want: { path: "workload.kind", reason: "must be one of A, B" },
    },
    {
      name: "oneof conflict names the second member",
      issue: issue({
        keyword: "not",
        parentSchema: { title: "oneof spec", not: { type: "object", required: ["container", "vm"] } },
      }),
      want: {
        path: "workload.vm",
        reason: 'cannot be set together with container: at most one member of the oneof "spec" may be set',
      },
    },
    {
      name: "timestamps explain the format",
      issue: issue({ instancePath: "/status/createdAt", keyword: "format", params: { format: "date-time" } }),
      want: { path: "workload.status.createdAt", reason: "must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z" },
    },
    {
      name: "a union type reads as alternatives",
      issue: issue({ instancePath: "/status/generation", params: { type: "integer,string" } }),
      want: { path: "workload.status.generation", reason: "must be an integer or string" },
    },
    {
      name: "the root itself",
      issue: issue({ params: { type: "object" } }),
      want: { path: "workload", reason: "must be an object" },
    },
  ])("$name", ({ issue: i, want }) => {
    expect(violationsOf([i], data, "workload")).toEqual([want]);
  });

  it("names the root (root) without a prefix", () => {
    expect(violationsOf([issue({ params: { type: "object" } })], 5)).toEqual([
      { path: "(root)", reason: "must be an object" },
    ]);
  });

  it("unescapes JSON pointer segments", () => {
    expect(violationsOf([issue({ instancePath: "/labels/a~1b~0c", params: { type: "string" } })], {}, "")).toEqual([
      { path: "labels.a/b~c", reason: "must be a string" },
    ]);
  });
});
