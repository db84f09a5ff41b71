import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import { PkiError } from "../pki/pki-error.js";
import { temporaryDirs } from "../pki/testing/tls-test-support.js";
import { VaultClient } from "../vault/vault-client.js";
import { type Envelope, EnvelopeCipher } from "./envelope-cipher.js";
import { EnvelopeError, type EnvelopeFailure } from "./key-provider.js";
import { KEYRING_FILE, LocalKeyProvider } from "./local-key-provider.js";
import { secretAad } from "./secret-store.js";
import { VaultTransitKeyProvider } from "./vault-transit-key-provider.js";

const dirs = temporaryDirs("persys-envelope-");
afterEach(() => dirs.cleanup());

const PLAINTEXT = Buffer.from("postgres://persys:correct-horse-battery-staple@db:5432/persys");

async function localCipher(dir = dirs.make()) {
  const provider = await LocalKeyProvider.loadOrCreate(dir);
  return { dir, provider, cipher: new EnvelopeCipher(provider) };
}

async function openFailure(promise: Promise<unknown>, reason: EnvelopeFailure): Promise<EnvelopeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EnvelopeError);
  expect((error as EnvelopeError).reason).toBe(reason);
  expect((error as PersysError).code).toBe("INTERNAL");
  expect((error as PersysError).message).not.toContain(PLAINTEXT.toString());
  return error as EnvelopeError;
}

const edit = (envelope: string, change: (e: Record<string, unknown>) => void): string => {
  const parsed = JSON.parse(envelope) as Record<string, unknown>;
  change(parsed);
  return JSON.stringify(parsed);
};

/** Flips one bit of a base64 field. */
const flip = (b64: string, index = 0): string => {
  const bytes = Buffer.from(b64, "base64");
  bytes[index % bytes.length]! ^= 0x01;
  return bytes.toString("base64");
};

describe("EnvelopeCipher with the LocalKeyProvider", () => {
  it.each([
    ["a URL", PLAINTEXT],
    ["an empty value", Buffer.alloc(0)],
    ["binary bytes", Buffer.from([0, 255, 1, 254, 0, 0])],
    ["a large value", Buffer.alloc(1 << 20, 7)],
  ])("round-trips %s", async (_name, value) => {
    const { cipher } = await localCipher();
    const envelope = await cipher.sealSecret("db", 1, value);
    expect((await cipher.openSecret("db", 1, envelope)).equals(value)).toBe(true);
    // Envelopes given back as bytes (as a store may hold them) open too.
    expect((await cipher.open(Buffer.from(envelope), secretAad("db", 1))).equals(value)).toBe(true);
  });

  it("writes the documented versioned JSON envelope", async () => {
    const { cipher, provider } = await localCipher();
    const envelope = JSON.parse(await cipher.sealSecret("db", 1, PLAINTEXT)) as Envelope;
    expect(Object.keys(envelope)).toEqual(["v", "alg", "kp", "kid", "wk", "iv", "tag", "ct"]);
    expect(envelope).toMatchObject({ v: 1, alg: "A256GCM", kp: "local", kid: provider.currentKeyId });
    expect(Buffer.from(envelope.iv, "base64")).toHaveLength(12);
    expect(Buffer.from(envelope.tag, "base64")).toHaveLength(16);
    expect(Buffer.from(envelope.wk, "base64")).toHaveLength(60);
    expect(Buffer.from(envelope.ct, "base64")).toHaveLength(PLAINTEXT.length);
  });

  it("never lets the plaintext appear in the envelope, in any field or decoding", async () => {
    const { cipher } = await localCipher();
    const envelope = await cipher.sealSecret("db", 1, PLAINTEXT);
    expect(envelope).not.toContain(PLAINTEXT.toString());
    expect(envelope).not.toContain(PLAINTEXT.toString("base64"));
    const parsed = JSON.parse(envelope) as Record<string, string>;
    for (const field of ["wk", "iv", "tag", "ct"]) {
      const decoded = Buffer.from(parsed[field]!, "base64");
      // No 8-byte window of the plaintext survives.
      for (let i = 0; i + 8 <= PLAINTEXT.length; i++)
        expect(decoded.includes(PLAINTEXT.subarray(i, i + 8))).toBe(false);
    }
  });

  it("makes a different envelope (data key, IV, ciphertext) for every seal of the same value", async () => {
    const { cipher } = await localCipher();
    const [a, b] = await Promise.all([cipher.sealSecret("db", 1, PLAINTEXT), cipher.sealSecret("db", 1, PLAINTEXT)]);
    const [x, y] = [JSON.parse(a) as Envelope, JSON.parse(b) as Envelope];
    expect(x.wk).not.toBe(y.wk);
    expect(x.iv).not.toBe(y.iv);
    expect(x.ct).not.toBe(y.ct);
  });

  it.each<[string, (e: Record<string, unknown>) => void, EnvelopeFailure]>([
    ["the ciphertext", (e) => (e.ct = flip(e.ct as string, 3)), "authentication-failed"],
    ["the tag", (e) => (e.tag = flip(e.tag as string)), "authentication-failed"],
    ["the IV", (e) => (e.iv = flip(e.iv as string)), "authentication-failed"],
    ["the wrapped data key", (e) => (e.wk = flip(e.wk as string, 40)), "unwrap-failed"],
    ["the key id", (e) => (e.kid = "k-00000000"), "unknown-key"],
    ["the provider kind", (e) => (e.kp = "vault-transit"), "unknown-key"],
    ["the version", (e) => (e.v = 2), "unsupported-version"],
    ["the algorithm", (e) => (e.alg = "A128GCM"), "unsupported-version"],
    ["a truncated tag", (e) => (e.tag = Buffer.alloc(8).toString("base64")), "malformed"],
    ["a missing field", (e) => delete e.ct, "malformed"],
  ])("refuses an envelope with altered %s (%s)", async (_name, change, reason) => {
    const { cipher } = await localCipher();
    const envelope = await cipher.sealSecret("db", 1, PLAINTEXT);
    await openFailure(cipher.openSecret("db", 1, edit(envelope, change)), reason);
  });

  it("refuses what is not an envelope", async () => {
    const { cipher } = await localCipher();
    await openFailure(cipher.openSecret("db", 1, "not json"), "malformed");
    await openFailure(cipher.openSecret("db", 1, "null"), "malformed");
  });

  it.each([
    ["another secret", "api", 1],
    ["another version", "db", 2],
  ])("refuses an envelope swapped to %s (AAD binds name and version)", async (_name, name, version) => {
    const { cipher } = await localCipher();
    const envelope = await cipher.sealSecret("db", 1, PLAINTEXT);
    // The wrapped data key is bound to the AAD as well, so the local provider refuses before the value.
    await openFailure(cipher.openSecret(name, version, envelope), "unwrap-failed");
  });

  it("refuses an envelope whose value ciphertext was swapped in from another secret", async () => {
    const { cipher } = await localCipher();
    const db = JSON.parse(await cipher.sealSecret("db", 1, PLAINTEXT)) as Envelope;
    const api = JSON.parse(await cipher.sealSecret("api", 1, Buffer.from("other"))) as Envelope;
    const spliced = JSON.stringify({ ...db, ct: api.ct, iv: api.iv, tag: api.tag });
    await openFailure(cipher.openSecret("db", 1, spliced), "authentication-failed");
  });

  it("refuses with a wrong KEK: another keyring, or the same key id holding other bytes", async () => {
    const { cipher, dir } = await localCipher();
    const envelope = await cipher.sealSecret("db", 1, PLAINTEXT);
    const other = await localCipher();
    await openFailure(other.cipher.openSecret("db", 1, envelope), "unknown-key");

    const keyring = JSON.parse(readFileSync(join(dir, KEYRING_FILE), "utf8")) as { keys: Record<string, string> };
    for (const id of Object.keys(keyring.keys)) keyring.keys[id] = Buffer.alloc(32, 9).toString("base64");
    const forged = dirs.make();
    writeFileSync(join(forged, KEYRING_FILE), JSON.stringify(keyring), { mode: 0o600 });
    const { cipher: wrong } = await localCipher(forged);
    const error = await openFailure(wrong.openSecret("db", 1, envelope), "unwrap-failed");
    expect(error.message).toMatch(/does not open with KEK k-[0-9a-f]{8}/);
  });
});

describe("LocalKeyProvider keyring", () => {
  it("is created on first start with mode 0600 in a 0700 folder, and loaded after", async () => {
    const dir = join(dirs.make(), "secrets");
    const first = await LocalKeyProvider.loadOrCreate(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, KEYRING_FILE)).mode & 0o777).toBe(0o600);
    const again = await LocalKeyProvider.loadOrCreate(dir);
    expect(again.currentKeyId).toBe(first.currentKeyId);
    const envelope = await new EnvelopeCipher(first).sealSecret("db", 1, PLAINTEXT);
    expect((await new EnvelopeCipher(again).openSecret("db", 1, envelope)).equals(PLAINTEXT)).toBe(true);
  });

  it("refuses a keyring readable by others", async () => {
    const dir = dirs.make();
    await LocalKeyProvider.loadOrCreate(dir);
    chmodSync(join(dir, KEYRING_FILE), 0o644);
    const error = await LocalKeyProvider.loadOrCreate(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PkiError);
    expect((error as PkiError).reason).toBe("key-permissions");
  });

  it.each([
    ["not JSON", "{"],
    ["not a keyring", "[]"],
    ["a short key", JSON.stringify({ v: 1, current: "k-00000000", keys: { "k-00000000": "AAAA" } })],
    ["a missing current key", JSON.stringify({ v: 1, current: "k-11111111", keys: {} })],
  ])("refuses a damaged keyring (%s) with INVALID_CONFIG naming the file", async (_name, text) => {
    const dir = dirs.make();
    writeFileSync(join(dir, KEYRING_FILE), text, { mode: 0o600 });
    const error = (await LocalKeyProvider.loadOrCreate(dir).catch((e: unknown) => e)) as PersysError;
    expect(error).toBeInstanceOf(PersysError);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.details[0]!.path).toBe(join(dir, KEYRING_FILE));
  });

  it("rotates: new secrets use the new KEK, old ones stay readable, also after a restart", async () => {
    const dir = dirs.make();
    const provider = await LocalKeyProvider.loadOrCreate(dir);
    const cipher = new EnvelopeCipher(provider);
    const before = await cipher.sealSecret("db", 1, PLAINTEXT);
    const oldId = provider.currentKeyId;
    const newId = await provider.rotate();
    expect(newId).not.toBe(oldId);
    expect(provider.keyIds).toEqual([oldId, newId]);
    const after = await cipher.sealSecret("db", 2, Buffer.from("rotated"));
    expect((JSON.parse(after) as Envelope).kid).toBe(newId);
    expect((await cipher.openSecret("db", 1, before)).equals(PLAINTEXT)).toBe(true);

    const restarted = new EnvelopeCipher(await LocalKeyProvider.loadOrCreate(dir));
    expect((await restarted.openSecret("db", 1, before)).equals(PLAINTEXT)).toBe(true);
    expect((await restarted.openSecret("db", 2, after)).toString()).toBe("rotated");
    expect(statSync(join(dir, KEYRING_FILE)).mode & 0o777).toBe(0o600);
  });
});

describe("EnvelopeCipher with the VaultTransitKeyProvider (nock-recorded Vault responses)", () => {
  const recorded = (name: string) =>
    JSON.parse(readFileSync(join(import.meta.dirname, "../vault/testdata", name), "utf8")) as nock.Definition;

  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  async function transitCipher() {
    nock.disableNetConnect();
    nock.define([recorded("approle-login.json")]);
    const vault = await VaultClient.connect({
      endpoint: "https://vault.persys.test:8200",
      auth: {
        method: "approle",
        roleId: "8c3f2a1e-6d4b-4e7f-9a2c-1b5d8e0f3a6c",
        secretId: "1f7d3b9e-2c6a-4d8f-8e1b-5a9c0d3e7f2b",
      },
    });
    return { vault, cipher: new EnvelopeCipher(new VaultTransitKeyProvider(vault, "persys-secrets")) };
  }

  it("seals with a transit data key and opens by asking transit to decrypt it", async () => {
    const { vault, cipher } = await transitCipher();
    try {
      nock.define([recorded("transit-datakey.json"), recorded("transit-decrypt.json")]);
      const envelope = await cipher.sealSecret("db", 1, PLAINTEXT);
      const parsed = JSON.parse(envelope) as Envelope;
      expect(parsed).toMatchObject({ kp: "vault-transit", kid: "persys-secrets" });
      expect(parsed.wk).toMatch(/^vault:v1:/);
      expect(envelope).not.toContain(PLAINTEXT.toString());
      expect((await cipher.openSecret("db", 1, envelope)).equals(PLAINTEXT)).toBe(true);
      expect(nock.pendingMocks()).toEqual([]);
    } finally {
      vault.close();
    }
  });

  it("opens envelopes of the local keyring after moving to Vault (previous providers)", async () => {
    const { vault } = await transitCipher();
    try {
      const local = await LocalKeyProvider.loadOrCreate(dirs.make());
      const old = await new EnvelopeCipher(local).sealSecret("db", 1, PLAINTEXT);
      const cipher = new EnvelopeCipher(new VaultTransitKeyProvider(vault, "persys-secrets"), { previous: [local] });
      expect((await cipher.openSecret("db", 1, old)).equals(PLAINTEXT)).toBe(true);
    } finally {
      vault.close();
    }
  });

  it("turns a wrapped key transit refuses into unwrap-failed", async () => {
    const { vault, cipher } = await transitCipher();
    try {
      nock.define([recorded("transit-datakey.json"), recorded("transit-decrypt-invalid-ciphertext.json")]);
      const envelope = await cipher.sealSecret("db", 1, PLAINTEXT);
      const tampered = edit(envelope, (e) => (e.wk = `${e.wk as string}x`));
      await openFailure(cipher.openSecret("db", 1, tampered), "unwrap-failed");
    } finally {
      vault.close();
    }
  });

  it("lets a sealed Vault's UNAVAILABLE (retryable) through when sealing", async () => {
    const { vault, cipher } = await transitCipher();
    try {
      nock.define([{ ...recorded("sealed.json"), path: "/v1/transit/datakey/plaintext/persys-secrets" }]);
      const error = (await cipher.sealSecret("db", 1, PLAINTEXT).catch((e: unknown) => e)) as PersysError;
      expect(error.code).toBe("UNAVAILABLE");
      expect(error.retryable).toBe(true);
    } finally {
      vault.close();
    }
  });
});
