/**
 * Vault's failures as typed Persys errors. Vault answers `{"errors": ["..."]}` with an HTTP status;
 * node-vault rejects with an `ApiResponseError` carrying both, and axios with a `code` when Vault cannot
 * be reached.
 *
 * | Vault says | code | retryable |
 * |---|---|---|
 * | 503 `Vault is sealed`, 503 standby / 429 / 412 / 5xx | UNAVAILABLE | yes |
 * | 403 `... invalid token`, 400 `lease not found or lease is not renewable`, 400 `invalid role or secret ID` | UNAUTHENTICATED | no |
 * | 403 `permission denied` | PERMISSION_DENIED | no |
 * | 404 | NOT_FOUND | no |
 * | other 400 (a request Vault refused, e.g. a CN the PKI role does not allow) | INVALID_ARGUMENT | no |
 * | connection refused / reset / timed out / name not resolved | UNAVAILABLE | yes |
 */
import { type ErrorCode, PersysError } from "@persys/schema";

const brand = Symbol.for("persys.vault-error");

/** A failed Vault call. `status` is Vault's HTTP status (absent when Vault was not reached). */
export class VaultError extends PersysError {
  /** What was asked, e.g. `POST pki/issue/persys-server`; never holds a token or secret. */
  readonly operation: string;
  readonly status: number | undefined;
  /** Vault's `errors` list, as it sent it. */
  readonly vaultErrors: readonly string[];

  constructor(
    code: ErrorCode,
    message: string,
    fields: { operation: string; status?: number; vaultErrors?: readonly string[]; retryable?: boolean },
  ) {
    super(code, message, fields.retryable !== undefined ? { retryable: fields.retryable } : {});
    this.name = "VaultError";
    this.operation = fields.operation;
    this.status = fields.status;
    this.vaultErrors = fields.vaultErrors ?? [];
    Object.defineProperty(this, brand, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ECONNABORTED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

/** Vault's multi-error text (`1 error occurred:\n\t* permission denied\n\n`) as one line. */
function flatten(text: string): string {
  const items = text
    .split("\n")
    .map((line) => line.replace(/^\s*\*\s*/, "").trim())
    .filter((line) => line !== "" && !/^\d+ errors? occurred:$/.test(line));
  return items.length > 0 ? items.join("; ") : text.trim();
}

function classify(status: number, text: string): { code: ErrorCode; hint: string } {
  const lower = text.toLowerCase();
  if (status === 503 && lower.includes("sealed")) {
    return { code: "UNAVAILABLE", hint: "Vault is sealed: unseal it (vault operator unseal); Persys retries" };
  }
  if (lower.includes("invalid token") || lower.includes("lease not found") || lower.includes("lease expired")) {
    return { code: "UNAUTHENTICATED", hint: "the Vault token or lease has expired or was revoked: log in again" };
  }
  if (
    lower.includes("invalid role or secret id") ||
    lower.includes("invalid role id") ||
    lower.includes("invalid secret id")
  ) {
    return { code: "UNAUTHENTICATED", hint: "the AppRole role_id or secret_id is wrong or expired" };
  }
  if (status === 403 || lower.includes("permission denied")) {
    return { code: "PERMISSION_DENIED", hint: "the Vault token's policies do not allow this path" };
  }
  if (status === 404) return { code: "NOT_FOUND", hint: "nothing at this path (is the secrets engine mounted?)" };
  if (status === 429 || status === 412 || status >= 500) {
    return { code: "UNAVAILABLE", hint: "Vault cannot serve the request now; Persys retries" };
  }
  if (status === 401) return { code: "UNAUTHENTICATED", hint: "Vault did not accept the credentials" };
  return { code: "INVALID_ARGUMENT", hint: "Vault refused the request" };
}

interface ResponseErrorLike {
  response?: { statusCode?: unknown; body?: unknown };
  code?: unknown;
  message?: unknown;
}

/**
 * The typed error for a failure of `operation` (e.g. `POST pki/issue/web`) at `endpoint`. It keeps no
 * `cause`: axios errors hold the request's headers, with the `X-Vault-Token`, and must not reach a log.
 */
export function vaultError(error: unknown, operation: string, endpoint: string): VaultError {
  if (error instanceof VaultError) return error;
  const e = (typeof error === "object" && error !== null ? error : {}) as ResponseErrorLike;
  const status = typeof e.response?.statusCode === "number" ? e.response.statusCode : undefined;
  if (status !== undefined) {
    const body = e.response?.body as { errors?: unknown } | undefined;
    const vaultErrors = Array.isArray(body?.errors)
      ? body.errors.filter((x): x is string => typeof x === "string")
      : [];
    const said = vaultErrors.map(flatten).join("; ") || `HTTP ${status}`;
    const { code, hint } = classify(status, said);
    return new VaultError(code, `Vault ${operation} failed (HTTP ${status}: ${said}): ${hint}`, {
      operation,
      status,
      vaultErrors,
    });
  }
  const errno = typeof e.code === "string" ? e.code : undefined;
  if (errno && UNREACHABLE.has(errno)) {
    return new VaultError("UNAVAILABLE", `cannot reach Vault at ${endpoint} for ${operation}: ${errno}`, { operation });
  }
  const text = typeof e.message === "string" ? e.message : String(error);
  // tv4 request validation (node-vault checks arguments before sending)
  if (typeof (error as { dataPath?: unknown })?.dataPath === "string") {
    return new VaultError("INVALID_ARGUMENT", `Vault ${operation}: invalid request: ${text}`, { operation });
  }
  return new VaultError("INTERNAL", `Vault ${operation} failed: ${text}`, { operation });
}
