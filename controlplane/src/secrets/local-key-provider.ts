/**
 * The embedded mode's key provider: key-encryption keys (KEKs) in a keyring file in the data dir,
 * created on first start. Data keys are wrapped with AES-256-GCM under the current KEK; `rotate()` adds
 * a new current KEK and keeps the old ones to unwrap what they wrapped.
 *
 * The keyring, `<dir>/kek-keyring.json` (mode 0600, folder 0700), is JSON:
 * `{"v":1,"current":"k-3f9a1c2e","keys":{"k-3f9a1c2e":"<base64 of 32 bytes>", ...}}`.
 *
 * One control plane per data dir: control planes sharing an etcd need the same keyring (copy the file)
 * or Vault transit. Losing the file loses every secret it wrapped: back it up with the data dir.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import {
  assertPrivateKeyFile,
  createFileExclusive,
  exists,
  KEY_DIR_MODE,
  KEY_FILE_MODE,
  restrictDirectory,
  writeFileAtomic,
} from "../pki/private-file.js";
import { EnvelopeError, type KeyProvider } from "./key-provider.js";

export const KEYRING_FILE = "kek-keyring.json";

interface Keyring {
  readonly v: 1;
  readonly current: string;
  readonly keys: Readonly<Record<string, string>>;
}

const KEY_ID = /^k-[0-9a-f]{8}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

function newKeyId(existing: ReadonlyMap<string, unknown>): string {
  for (;;) {
    const id = `k-${randomBytes(4).toString("hex")}`;
    if (!existing.has(id)) return id;
  }
}

function keyringError(path: string, problem: string): PersysError {
  return new PersysError("INVALID_CONFIG", `the secrets keyring ${path} ${problem}`, {
    details: [{ path, reason: problem }],
  });
}

function parseKeyring(text: string, path: string): Map<string, Buffer> & { current: string } {
  let value: Partial<Keyring>;
  try {
    value = JSON.parse(text) as Partial<Keyring>;
  } catch {
    throw keyringError(path, "is not JSON");
  }
  if (value?.v !== 1 || typeof value.current !== "string" || typeof value.keys !== "object" || value.keys === null) {
    throw keyringError(path, 'is not a keyring ({"v":1,"current":...,"keys":{...}})');
  }
  const keys = new Map<string, Buffer>() as Map<string, Buffer> & { current: string };
  for (const [id, encoded] of Object.entries(value.keys)) {
    const key = typeof encoded === "string" ? Buffer.from(encoded, "base64") : Buffer.alloc(0);
    if (!KEY_ID.test(id) || key.length !== 32) throw keyringError(path, `holds a malformed key ${id}`);
    keys.set(id, key);
  }
  if (!keys.has(value.current)) throw keyringError(path, `names a current key ${value.current} it does not hold`);
  keys.current = value.current;
  return keys;
}

function serialise(keys: ReadonlyMap<string, Buffer>, current: string): string {
  const keyring: Keyring = {
    v: 1,
    current,
    keys: Object.fromEntries([...keys].map(([id, key]) => [id, key.toString("base64")])),
  };
  return `${JSON.stringify(keyring, null, 2)}\n`;
}

const wrapAad = (keyId: string, context: string) => Buffer.from(`persys-data-key:${keyId}:${context}`, "utf8");

/** KEKs in a keyring file; see the module comment. */
export class LocalKeyProvider implements KeyProvider {
  readonly kind = "local" as const;

  private constructor(
    private readonly path: string,
    private readonly keys: Map<string, Buffer>,
    private current: string,
  ) {}

  /**
   * Loads `<dir>/kek-keyring.json`, or creates it with one KEK (folder 0700, file 0600) when absent.
   * A keyring readable by others: `PkiError` `key-permissions` (INVALID_CONFIG); a damaged one:
   * INVALID_CONFIG naming the file. Never overwrites an existing keyring.
   */
  static async loadOrCreate(dir: string): Promise<LocalKeyProvider> {
    const path = join(dir, KEYRING_FILE);
    if (!(await exists(path))) {
      const dirExisted = await exists(dir);
      await mkdir(dir, { recursive: true, mode: KEY_DIR_MODE });
      if (!dirExisted) await restrictDirectory(dir);
      const id = newKeyId(new Map());
      const keys = new Map([[id, randomBytes(32)]]);
      if (await createFileExclusive(path, serialise(keys, id), KEY_FILE_MODE))
        return new LocalKeyProvider(path, keys, id);
    }
    await assertPrivateKeyFile(path);
    const keys = parseKeyring(await readFile(path, "utf8"), path);
    return new LocalKeyProvider(path, keys, keys.current);
  }

  /** The id of the KEK new data keys are wrapped with. */
  get currentKeyId(): string {
    return this.current;
  }

  /** Every KEK id held (current and previous). */
  get keyIds(): readonly string[] {
    return [...this.keys.keys()];
  }

  /**
   * Adds a new KEK and makes it current; the old ones stay to unwrap existing envelopes (re-seal secrets
   * to stop depending on them). Writes the keyring atomically before using the new key.
   */
  async rotate(): Promise<string> {
    const id = newKeyId(this.keys);
    const keys = new Map(this.keys).set(id, randomBytes(32));
    await writeFileAtomic(this.path, serialise(keys, id), KEY_FILE_MODE);
    this.keys.set(id, keys.get(id)!);
    this.current = id;
    return id;
  }

  async generateDataKey(context: string): Promise<{ plaintext: Buffer; wrapped: string; keyId: string }> {
    const keyId = this.current;
    const kek = this.keys.get(keyId)!;
    const plaintext = randomBytes(32);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", kek, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(wrapAad(keyId, context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const wrapped = Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
    return { plaintext, wrapped, keyId };
  }

  async unwrapDataKey(wrapped: string, keyId: string, context: string): Promise<Buffer> {
    const kek = this.keys.get(keyId);
    if (!kek) {
      throw new EnvelopeError(
        "unknown-key",
        `the secret's data key was wrapped with KEK ${keyId}, which the keyring ${this.path} does not hold`,
      );
    }
    const bytes = Buffer.from(wrapped, "base64");
    if (bytes.length !== IV_BYTES + TAG_BYTES + 32)
      throw new EnvelopeError("malformed", "the wrapped data key is not 60 bytes");
    try {
      const decipher = createDecipheriv("aes-256-gcm", kek, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(wrapAad(keyId, context));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new EnvelopeError(
        "unwrap-failed",
        `the secret's data key does not open with KEK ${keyId}: a wrong keyring, or the envelope was altered or belongs to another secret`,
      );
    }
  }
}
