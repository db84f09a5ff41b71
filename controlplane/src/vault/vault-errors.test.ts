import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { VaultError, vaultError } from "./vault-errors.js";

/** As node-vault rejects: an ApiResponseError with the status and Vault's body. */
const response = (statusCode: number, errors: string[]) =>
  Object.assign(new Error(errors[0] ?? `Status ${statusCode}`), { response: { statusCode, body: { errors } } });

describe("vaultError", () => {
  it.each<[string, unknown, string, boolean]>([
    ["sealed", response(503, ["Vault is sealed"]), "UNAVAILABLE", true],
    ["a standby node", response(503, ["node is not active"]), "UNAVAILABLE", true],
    ["rate limited", response(429, ['request path "pki/issue/x": rate limit quota exceeded']), "UNAVAILABLE", true],
    ["an internal error", response(500, ["1 error occurred:\n\t* internal error\n\n"]), "UNAVAILABLE", true],
    ["permission denied", response(403, ["1 error occurred:\n\t* permission denied\n\n"]), "PERMISSION_DENIED", false],
    [
      "an invalid token",
      response(403, ["2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n"]),
      "UNAUTHENTICATED",
      false,
    ],
    ["a lease not found", response(400, ["lease not found or lease is not renewable"]), "UNAUTHENTICATED", false],
    ["a wrong AppRole secret", response(400, ["invalid role or secret ID"]), "UNAUTHENTICATED", false],
    ["a missing path", response(404, []), "NOT_FOUND", false],
    [
      "a CN the role refuses",
      response(400, ["common name example.com not allowed by this role"]),
      "INVALID_ARGUMENT",
      false,
    ],
    [
      "connection refused",
      Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
      "UNAVAILABLE",
      true,
    ],
    [
      "a timeout",
      Object.assign(new Error("timeout of 10000ms exceeded"), { code: "ECONNABORTED" }),
      "UNAVAILABLE",
      true,
    ],
    ["a name not resolved", Object.assign(new Error("getaddrinfo"), { code: "ENOTFOUND" }), "UNAVAILABLE", true],
    [
      "a request node-vault refused",
      { message: "Invalid type: number", dataPath: "/role_id" },
      "INVALID_ARGUMENT",
      false,
    ],
    ["anything else", new Error("boom"), "INTERNAL", false],
  ])("maps %s to %s (retryable: %s)", (_name, error, code, retryable) => {
    const mapped = vaultError(error, "POST pki/issue/web", "https://vault:8200");
    expect(mapped).toBeInstanceOf(VaultError);
    expect(mapped).toBeInstanceOf(PersysError);
    expect([mapped.code, mapped.retryable]).toEqual([code, retryable]);
    expect(mapped.operation).toBe("POST pki/issue/web");
  });

  it("flattens Vault's multi-error text into the message", () => {
    const mapped = vaultError(
      response(403, ["2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n"]),
      "GET x",
      "e",
    );
    expect(mapped.message).toBe(
      "Vault GET x failed (HTTP 403: permission denied; invalid token): " +
        "the Vault token or lease has expired or was revoked: log in again",
    );
    expect(mapped.vaultErrors).toEqual(["2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n"]);
  });

  it("is not fooled by PersysErrors of other kinds", () => {
    expect(new PersysError("UNAVAILABLE", "x")).not.toBeInstanceOf(VaultError);
  });
});
