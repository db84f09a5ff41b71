import { PersysError } from "@persys/schema";

/**
 * What wraps the per-secret data keys of the envelope cipher: a key-encryption key (KEK) kept apart from
 * the data. Implementations: `LocalKeyProvider` (a keyring file in the data dir) and
 * `VaultTransitKeyProvider` (Vault transit).
 */
export interface KeyProvider {
  /** Recorded in each envelope (`kp`) so the cipher knows which provider unwraps it. */
  readonly kind: "local" | "vault-transit";
  /**
   * A fresh 256-bit data key: `plaintext` for one encryption (the caller zeroes it), `wrapped` (text) to
   * store, and `keyId`, the KEK it was wrapped with. `context` is bound to the wrapped key where the
   * provider can (local: as GCM AAD); unwrapping with another context fails.
   */
  generateDataKey(context: string): Promise<{ plaintext: Buffer; wrapped: string; keyId: string }>;
  /** The data key back from `wrapped`. Wrong KEK, tampering or another context: {@link EnvelopeError}. */
  unwrapDataKey(wrapped: string, keyId: string, context: string): Promise<Buffer>;
}

/**
 * Why an envelope did not open:
 * - `malformed`: not an envelope (bad JSON, fields missing or of the wrong size);
 * - `unsupported-version`: an envelope format this code does not know;
 * - `unknown-key`: its KEK id (or provider kind) is not available here (e.g. a rotated-out or another
 *   cluster's key);
 * - `unwrap-failed`: the data key does not open with the KEK (a wrong KEK, or the wrapped key was altered);
 * - `authentication-failed`: the value does not open: ciphertext, IV, tag or AAD altered, or the envelope
 *   belongs to another secret or version.
 */
export type EnvelopeFailure =
  | "malformed"
  | "unsupported-version"
  | "unknown-key"
  | "unwrap-failed"
  | "authentication-failed";

const brand = Symbol.for("persys.envelope-error");

/** An envelope that cannot be opened (INTERNAL, not retryable: the stored data or the keys are wrong). */
export class EnvelopeError extends PersysError {
  readonly reason: EnvelopeFailure;

  constructor(reason: EnvelopeFailure, message: string) {
    super("INTERNAL", message, { details: [{ path: "envelope", reason }] });
    this.name = "EnvelopeError";
    this.reason = reason;
    Object.defineProperty(this, brand, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}
