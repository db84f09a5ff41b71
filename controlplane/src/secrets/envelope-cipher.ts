/**
 * AES-256-GCM envelope encryption of secret values: per seal a fresh 256-bit data key encrypts the
 * value (random 96-bit IV, 128-bit tag, AAD binding it to one secret version), and a {@link KeyProvider}
 * wraps the data key. The plaintext data key never leaves memory and is zeroed after use.
 *
 * ```ts
 * const cipher = new EnvelopeCipher(await LocalKeyProvider.loadOrCreate(join(dataDir, "secrets")));
 * const envelope = await cipher.sealSecret("db", 3, Buffer.from("s3cret"));   // store this text
 * const value = await cipher.openSecret("db", 3, envelope);
 * ```
 *
 * The envelope is versioned JSON text (one line), every binary field base64:
 *
 * ```json
 * {"v":1,"alg":"A256GCM","kp":"local","kid":"k-3f9a1c2e","wk":"<wrapped data key>","iv":"<12 bytes>","tag":"<16 bytes>","ct":"<ciphertext>"}
 * ```
 *
 * `v` format version (1); `alg` the value cipher; `kp` the key provider kind; `kid` the KEK id (local:
 * keyring id; Vault: the transit key name, its version is inside `wk`); `wk` the wrapped data key (local:
 * base64 of IV|tag|ciphertext; Vault: `vault:v<n>:...`); `iv`, `tag`, `ct` the value's GCM parts. The
 * AAD is not stored: the caller passes it again to open (`secretAad(name, version)`), so an envelope
 * copied to another secret or version does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { EnvelopeError, type KeyProvider } from "./key-provider.js";
import { type SecretSealer, secretAad } from "./secret-store.js";

const FORMAT_VERSION = 1;
const ALGORITHM = "A256GCM";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** The parsed envelope (see the module comment for the fields). */
export interface Envelope {
  readonly v: 1;
  readonly alg: "A256GCM";
  readonly kp: KeyProvider["kind"];
  readonly kid: string;
  readonly wk: string;
  readonly iv: string;
  readonly tag: string;
  readonly ct: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function parseEnvelope(envelope: Buffer | string): Envelope {
  const text = typeof envelope === "string" ? envelope : envelope.toString("utf8");
  let value: Partial<Record<keyof Envelope, unknown>>;
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    throw new EnvelopeError("malformed", "the secret envelope is not JSON");
  }
  if (typeof value !== "object" || value === null)
    throw new EnvelopeError("malformed", "the secret envelope is not an object");
  if (value.v !== FORMAT_VERSION || value.alg !== ALGORITHM) {
    throw new EnvelopeError(
      "unsupported-version",
      `secret envelope version ${String(value.v)} / ${String(value.alg)} is not supported (this version reads v${FORMAT_VERSION} ${ALGORITHM})`,
    );
  }
  const strings = ["kp", "kid", "wk", "iv", "tag", "ct"] as const;
  for (const field of strings) {
    if (typeof value[field] !== "string") throw new EnvelopeError("malformed", `the secret envelope has no ${field}`);
  }
  for (const field of ["iv", "tag", "ct"] as const) {
    if (!BASE64.test(value[field] as string))
      throw new EnvelopeError("malformed", `the envelope's ${field} is not base64`);
  }
  if (Buffer.from(value.iv as string, "base64").length !== IV_BYTES)
    throw new EnvelopeError("malformed", "the envelope's IV is not 12 bytes");
  if (Buffer.from(value.tag as string, "base64").length !== TAG_BYTES) {
    throw new EnvelopeError("malformed", "the envelope's tag is not 16 bytes");
  }
  return value as unknown as Envelope;
}

/**
 * Seals and opens secret values; implements the secret store's `SecretSealer`. Seals with `provider`;
 * opens envelopes of `provider` and of any of `previous` (e.g. the local keyring after moving to Vault),
 * chosen by the envelope's `kp`.
 */
export class EnvelopeCipher implements SecretSealer {
  private readonly providers: ReadonlyMap<string, KeyProvider>;

  constructor(
    private readonly provider: KeyProvider,
    options: { previous?: readonly KeyProvider[] } = {},
  ) {
    const providers = new Map<string, KeyProvider>();
    for (const p of options.previous ?? []) providers.set(p.kind, p);
    providers.set(provider.kind, provider);
    this.providers = providers;
  }

  /**
   * Encrypts `plaintext` under a fresh data key, bound to `aad`. Returns the envelope text. Provider
   * failures pass through (Vault: `VaultError`, e.g. UNAVAILABLE, retryable); nothing is stored.
   */
  async seal(plaintext: Buffer, aad: string): Promise<string> {
    const { plaintext: dataKey, wrapped, keyId } = await this.provider.generateDataKey(aad);
    try {
      if (dataKey.length !== KEY_BYTES) throw new Error(`the key provider gave a ${dataKey.length * 8}-bit data key`);
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", dataKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(aad, "utf8"));
      const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      const envelope: Envelope = {
        v: FORMAT_VERSION,
        alg: ALGORITHM,
        kp: this.provider.kind,
        kid: keyId,
        wk: wrapped,
        iv: iv.toString("base64"),
        tag: cipher.getAuthTag().toString("base64"),
        ct: ct.toString("base64"),
      };
      return JSON.stringify(envelope);
    } finally {
      dataKey.fill(0);
    }
  }

  /**
   * Decrypts an envelope made by {@link seal} with the same `aad`. Failures are {@link EnvelopeError}s
   * naming why (see `EnvelopeFailure`); provider failures pass through.
   */
  async open(envelope: Buffer | string, aad: string): Promise<Buffer> {
    const parsed = parseEnvelope(envelope);
    const provider = this.providers.get(parsed.kp);
    if (!provider) {
      throw new EnvelopeError(
        "unknown-key",
        `the secret was sealed by a "${parsed.kp}" key provider, which is not configured`,
      );
    }
    const dataKey = await provider.unwrapDataKey(parsed.wk, parsed.kid, aad);
    try {
      if (dataKey.length !== KEY_BYTES)
        throw new EnvelopeError("unwrap-failed", "the unwrapped data key is not 256 bits");
      const decipher = createDecipheriv("aes-256-gcm", dataKey, Buffer.from(parsed.iv, "base64"), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(Buffer.from(parsed.tag, "base64"));
      try {
        return Buffer.concat([decipher.update(Buffer.from(parsed.ct, "base64")), decipher.final()]);
      } catch {
        throw new EnvelopeError(
          "authentication-failed",
          "the secret does not decrypt: its envelope was altered or belongs to another secret or version",
        );
      }
    } finally {
      dataKey.fill(0);
    }
  }

  /** {@link seal} bound to one secret version (AAD `secretAad(name, version)`). */
  sealSecret(name: string, version: number, plaintext: Buffer): Promise<string> {
    return this.seal(plaintext, secretAad(name, version));
  }

  /** {@link open} for one secret version. */
  openSecret(name: string, version: number, envelope: Buffer | string): Promise<Buffer> {
    return this.open(envelope, secretAad(name, version));
  }
}
