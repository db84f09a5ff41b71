import { describe, expect, it } from "vitest";
import { errorCodes, errorRegistry } from "./error-registry.js";
import { invalid, PersysError } from "./persys-error.js";

describe("PersysError", () => {
  it("carries code, details and the registry's retryable default", () => {
    const error = new PersysError("UNSCHEDULABLE", "0/3 nodes are available");
    expect(error.code).toBe("UNSCHEDULABLE");
    expect(error.retryable).toBe(true);
    expect(error.httpStatus).toBe(422);
  });

  it("is recognised by instanceof even when built by another copy of the class", () => {
    const foreign = Object.defineProperty(new Error("x"), Symbol.for("persys.error"), { value: true });
    expect(foreign instanceof PersysError).toBe(true);
    expect(new Error("plain") instanceof PersysError).toBe(false);
  });

  it("round-trips through its wire body and names every field", () => {
    const error = invalid("INVALID_SPEC", [
      { path: "spec.container.image", reason: "is required" },
      { path: "replicas", reason: "must be >= 0" },
    ]);
    expect(error.message).toBe("invalid input: spec.container.image: is required; replicas: must be >= 0");
    const back = PersysError.fromBody(JSON.parse(JSON.stringify(error.toBody())));
    expect(back.toBody()).toEqual(error.toBody());
  });

  it("maps an unknown wire code to INTERNAL and keeps the text", () => {
    const back = PersysError.fromBody({ code: "WHAT", message: "odd" });
    expect([back.code, back.message]).toEqual(["INTERNAL", "odd"]);
  });

  it("has an HTTP status in the 4xx/5xx range for every code", () => {
    for (const code of errorCodes) expect(errorRegistry[code].http).toBeGreaterThanOrEqual(400);
  });
});
