// The public API's ErrorCode enum and the error registry must name the same codes, so a code on the
// wire always has a registry entry (HTTP/gRPC status, retryable, remediation) and vice versa.
import { describe, expect, it } from "vitest";
import { errorCodes, errorRegistry, isErrorCode } from "../errors/error-registry.js";
import { api } from "../index.js";

const UNSPECIFIED = "ERROR_CODE_UNSPECIFIED";

/** Value names of a numeric TS enum (its reverse mapping holds number → name). */
function enumEntries(e: Record<string, string | number>): [string, number][] {
  return Object.entries(e).filter((entry): entry is [string, number] => typeof entry[1] === "number");
}

describe("api.ErrorCode and the error registry", () => {
  const protoCodes = enumEntries(api.ErrorCode);

  it("name the same set of codes (besides the proto zero value)", () => {
    const names = protoCodes.map(([name]) => name).filter((name) => name !== UNSPECIFIED);
    expect(new Set(names)).toEqual(new Set(errorCodes));
    expect(names).toHaveLength(errorCodes.length);
  });

  it("keep ERROR_CODE_UNSPECIFIED as 0 and outside the registry", () => {
    expect(api.ErrorCode.ERROR_CODE_UNSPECIFIED).toBe(0);
    expect(isErrorCode(UNSPECIFIED)).toBe(false);
  });

  it("give every code its own number", () => {
    const numbers = protoCodes.map(([, n]) => n);
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it.each(errorCodes)("%s survives a binary and a JSON round trip of api.Error", (code) => {
    const value = api.ErrorCode[code];
    const error: api.Error = {
      code: value,
      message: errorRegistry[code].summary,
      details: [{ path: "workload.id", reason: "must be a DNS-1123 label" }],
      retryable: errorRegistry[code].retryable,
    };
    expect(api.Error.decode(api.Error.encode(error).finish())).toEqual(error);
    expect(api.Error.toJSON(error)).toMatchObject({ code });
    expect(api.Error.fromJSON(api.Error.toJSON(error))).toEqual(error);
  });
});
