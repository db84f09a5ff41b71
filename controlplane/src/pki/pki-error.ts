import { PersysError } from "@persys/schema";

/**
 * Why the PKI refused its files:
 * - `key-permissions`: a private key file is readable or writable by group or others (must be 0600);
 * - `key-mismatch`: the private key does not belong to the certificate beside it;
 * - `incomplete`: one of the pair (`ca.crt`, `ca.key`) exists without the other;
 * - `unreadable`: a file is not valid PEM / not a certificate or key;
 * - `not-a-ca`: the CA certificate is not a self-signed CA (basicConstraints CA:true);
 * - `unsupported-key`: the key is not ECDSA P-256.
 */
export type PkiErrorReason =
  | "key-permissions"
  | "key-mismatch"
  | "incomplete"
  | "unreadable"
  | "not-a-ca"
  | "unsupported-key";

const brand = Symbol.for("persys.pki-error");

/**
 * The PKI refused files in its directory (INVALID_CONFIG: the operator must fix or remove them; nothing
 * was overwritten). `path` names the offending file, `reason` says what is wrong with it.
 */
export class PkiError extends PersysError {
  readonly reason: PkiErrorReason;
  readonly path: string;

  constructor(reason: PkiErrorReason, path: string, message: string, options: { cause?: unknown } = {}) {
    super("INVALID_CONFIG", message, { details: [{ path, reason }], ...options });
    this.name = "PkiError";
    this.reason = reason;
    this.path = path;
    Object.defineProperty(this, brand, { value: true });
  }

  /** Decided by a global symbol, so it holds across two loaded copies (and is false for other PersysErrors). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}
