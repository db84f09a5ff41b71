import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { toHttpError } from "./http-error.js";

describe("toHttpError", () => {
  it.each([
    {
      name: "PersysError → registry status",
      thrown: new PersysError("UNSCHEDULABLE", "0/3"),
      status: 422,
      code: "UNSCHEDULABLE",
    },
    {
      name: "malformed JSON",
      thrown: Object.assign(new Error("x"), { code: "FST_ERR_CTP_INVALID_JSON_BODY", statusCode: 400 }),
      status: 400,
      code: "INVALID_ARGUMENT",
    },
    {
      name: "body too large",
      thrown: Object.assign(new Error("x"), { code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413 }),
      status: 413,
      code: "INVALID_ARGUMENT",
    },
    {
      name: "unsupported media type",
      thrown: Object.assign(new Error("x"), { code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 }),
      status: 415,
      code: "INVALID_ARGUMENT",
    },
    { name: "unexpected", thrown: new Error("db password is hunter2"), status: 500, code: "INTERNAL" },
  ])("$name", ({ thrown, status, code }) => {
    const mapped = toHttpError(thrown);
    expect([mapped.status, mapped.body.code]).toEqual([status, code]);
    expect(mapped.body.message).not.toContain("hunter2");
    expect(Object.keys(mapped.body).sort()).toEqual(["code", "details", "message", "retryable"]);
  });

  it("names body fields under the route's prefix with the route's code", () => {
    const thrown = Object.assign(new Error("v"), {
      statusCode: 400,
      validationContext: "body",
      validation: [{ instancePath: "/replicas", keyword: "type", params: { type: "integer" } }],
    });
    const mapped = toHttpError(thrown, { body: { replicas: "2" } }, { body: "workload", bodyCode: "INVALID_SPEC" });
    expect(mapped.status).toBe(400);
    expect(mapped.body).toMatchObject({
      code: "INVALID_SPEC",
      details: [{ path: "workload.replicas", reason: "must be an integer" }],
    });
  });

  it("names query parameters without a prefix", () => {
    const thrown = Object.assign(new Error("v"), {
      validationContext: "querystring",
      validation: [{ instancePath: "", keyword: "additionalProperties", params: { additionalProperty: "pagesize" } }],
    });
    expect(toHttpError(thrown, { querystring: {} }).body.details).toEqual([
      { path: "pagesize", reason: "unknown query parameter" },
    ]);
  });
});
