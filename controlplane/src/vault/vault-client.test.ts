import { createPrivateKey, X509Certificate as NodeX509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { VaultClient, type VaultClientOptions } from "./vault-client.js";
import { VaultError } from "./vault-errors.js";

const ENDPOINT = "https://vault.persys.test:8200";
const APPROLE = {
  method: "approle",
  roleId: "8c3f2a1e-6d4b-4e7f-9a2c-1b5d8e0f3a6c",
  secretId: "1f7d3b9e-2c6a-4d8f-8e1b-5a9c0d3e7f2b",
} as const;

type Definition = nock.Definition & { reqheaders?: Record<string, string>; response?: unknown; rawHeaders?: string[] };

/** One nock-recorded Vault exchange from testdata/. */
function recorded(name: string): Definition {
  return JSON.parse(readFileSync(join(import.meta.dirname, "testdata", name), "utf8")) as Definition;
}

const FIRST_TOKEN = (recorded("approle-login.json").response as { auth: { client_token: string } }).auth.client_token;
const SECOND_TOKEN = (recorded("approle-login-second.json").response as { auth: { client_token: string } }).auth
  .client_token;

/** Loads exchanges (each answered once, in order for the same request). */
function vault(...exchanges: (string | Definition)[]): nock.Scope[] {
  return nock.define(exchanges.map((e) => (typeof e === "string" ? recorded(e) : e)));
}

/** A recorded exchange with another answer (the recorded Content-Length no longer applies). */
function answered(name: string, status: number, response: unknown): Definition {
  const definition = recorded(name);
  const headers = definition.rawHeaders ?? [];
  const rawHeaders = headers.flatMap((h, i, all) =>
    i % 2 === 0 && h.toLowerCase() !== "content-length" ? [h, all[i + 1]!] : [],
  );
  return { ...definition, status, response, rawHeaders } as Definition;
}

/** Lets pending I/O (nock's replies) and promise chains run, without moving fake time. */
async function settle(predicate?: () => boolean): Promise<void> {
  // With a predicate: until it holds, for up to 10 s of real time (nock answers through real I/O,
  // which a loaded CI machine can take a while to run); without: a fixed number of turns.
  const started = performance.now();
  for (let i = 0; predicate ? !predicate() && performance.now() - started < 10_000 : i < 500; i++)
    await new Promise((resolve) => setImmediate(resolve));
}

/** A recorded exchange answered for another token (as after a second login). */
function forToken(name: string, token: string): Definition {
  return { ...recorded(name), reqheaders: { "x-vault-token": token } };
}

const clients: VaultClient[] = [];
async function connect(options: Partial<VaultClientOptions> = {}): Promise<VaultClient> {
  const client = await VaultClient.connect({ endpoint: ENDPOINT, auth: APPROLE, ...options });
  clients.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<VaultError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(VaultError);
  return error as VaultError;
}

beforeEach(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  vi.useRealTimers();
  const pending = nock.pendingMocks();
  nock.cleanAll();
  nock.enableNetConnect();
  expect(pending, "every recorded exchange was used").toEqual([]);
});

describe("VaultClient login and PKI (nock-recorded Vault responses)", () => {
  it("logs in with AppRole and issues a certificate whose PEM parses and chains to the CA", async () => {
    vault("approle-login.json", "pki-issue.json");
    const client = await connect();
    expect(client.token).toMatchObject({
      accessor: "Jp0mP6b2cSxbzkx7Q2uKXZ5L",
      policies: ["default", "persys-control-plane"],
      renewable: true,
    });
    const issued = await client.issueCertificate("persys-server", {
      commonName: "control-plane",
      altNames: ["control-plane.persys.test", "localhost"],
      ipSans: ["127.0.0.1"],
      ttl: "720h",
    });
    const cert = new NodeX509Certificate(issued.certPem);
    const ca = new NodeX509Certificate(issued.caPem);
    expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(issued.keyPem))).toBe(true);
    expect(issued.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n$/);
    expect(cert.checkHost("localhost")).toBe("localhost");
    expect(cert.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(issued.serial).toBe(cert.serialNumber.toLowerCase());
    const expiration = (recorded("pki-issue.json").response as { data: { expiration: number } }).data.expiration;
    expect(issued.notAfter.getTime()).toBe(expiration * 1000);
    expect(issued.notBefore.getTime()).toBe(Date.parse(cert.validFrom));
  });

  it("logs in with a token by looking it up (lease and policies)", async () => {
    vault("token-lookup-self.json");
    const client = await connect({ auth: { method: "token", token: FIRST_TOKEN } });
    expect(client.token.renewable).toBe(true);
    expect(client.token.expiresAt!.getTime() - Date.now()).toBeGreaterThan(2_764_000_000);
  });

  it("refuses a wrong AppRole secret_id as UNAUTHENTICATED", async () => {
    vault("approle-login-invalid-secret-id.json");
    const error = await failure(connect());
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.retryable).toBe(false);
    expect(error.status).toBe(400);
    expect(error.message).toContain("invalid role or secret ID");
    expect(error.message).not.toContain(APPROLE.secretId);
  });

  it("maps a sealed Vault to UNAVAILABLE, retryable", async () => {
    vault("sealed.json");
    const error = await failure(connect());
    expect(error.code).toBe("UNAVAILABLE");
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(503);
    expect(error.vaultErrors).toEqual(["Vault is sealed"]);
    expect(error.message).toMatch(/Vault is sealed.*unseal/);
  });

  it("maps permission denied to PERMISSION_DENIED and does not log in again for it", async () => {
    vault("approle-login.json", "pki-issue-permission-denied.json");
    const client = await connect();
    const error = await failure(client.issueCertificate("persys-server", { commonName: "control-plane" }));
    expect(error.code).toBe("PERMISSION_DENIED");
    expect(error.retryable).toBe(false);
    expect(error.operation).toBe("POST pki/issue/persys-server");
    expect(error.message).toBe(
      "Vault POST pki/issue/persys-server failed (HTTP 403: permission denied): " +
        "the Vault token's policies do not allow this path",
    );
  });

  it("keeps no cause on its errors, so the token in the request cannot reach a log", async () => {
    vault("approle-login.json", "pki-issue-permission-denied.json");
    const client = await connect();
    const error = await failure(client.issueCertificate("persys-server", { commonName: "control-plane" }));
    expect(error.cause).toBeUndefined();
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(FIRST_TOKEN);
  });

  it("maps connection refused to UNAVAILABLE, retryable", async () => {
    nock.enableNetConnect("127.0.0.1:9");
    const error = await failure(VaultClient.connect({ endpoint: "http://127.0.0.1:9", auth: APPROLE }));
    expect(error.code).toBe("UNAVAILABLE");
    expect(error.retryable).toBe(true);
    expect(error.status).toBeUndefined();
    expect(error.message).toBe("cannot reach Vault at http://127.0.0.1:9 for POST auth/approle/login: ECONNREFUSED");
  });
});

describe("VaultClient token renewal (nock-recorded Vault responses, fake timers)", () => {
  const HOUR_MS = 3600 * 1000;

  it("renews the token when a third of its lease remains, not before, and keeps renewing", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vault("approle-login.json");
    const client = await connect();
    const loggedInAt = Date.now();
    expect(client.token.expiresAt!.getTime()).toBe(loggedInAt + HOUR_MS);

    const renewal = vault("token-renew-self.json")[0]!;
    await vi.advanceTimersByTimeAsync((2 / 3) * HOUR_MS - 1);
    await settle();
    expect(renewal.isDone()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const renewedAt = Date.now();
    await settle(() => client.token.expiresAt!.getTime() > loggedInAt + HOUR_MS);
    expect(renewal.isDone()).toBe(true);
    expect(renewedAt).toBe(loggedInAt + (2 / 3) * HOUR_MS);
    expect(client.token.expiresAt!.getTime()).toBe(renewedAt + HOUR_MS);

    const second = vault("token-renew-self.json")[0]!;
    await vi.advanceTimersByTimeAsync((2 / 3) * HOUR_MS);
    await settle(() => second.isDone());
    expect(second.isDone()).toBe(true);
  });

  it.each([
    ["lease not found (400)", "token-renew-self-lease-not-found.json", "UNAUTHENTICATED"],
    ["invalid token (403)", "token-renew-self-invalid-token.json", "UNAUTHENTICATED"],
    ["permission denied (403)", "token-renew-self-permission-denied.json", "PERMISSION_DENIED"],
  ])("logs in again with AppRole when renewal fails with %s", async (_name, fixture, code) => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vault("approle-login.json");
    const errors: VaultError[] = [];
    const client = await connect({ onError: (e) => errors.push(e) });
    const [failed, relogin] = vault(fixture, "approle-login-second.json");
    await vi.advanceTimersByTimeAsync((2 / 3) * HOUR_MS);
    await settle(() => client.token.accessor === "Qm7vN2xC9bZ4kL1pR8sT5wYd");
    expect(failed!.isDone() && relogin!.isDone()).toBe(true);
    expect(errors.map((e) => e.code)).toEqual([code]);
    expect(client.token.accessor).toBe("Qm7vN2xC9bZ4kL1pR8sT5wYd");
    // Later calls carry the new token.
    vault(forToken("kv-get.json", SECOND_TOKEN));
    expect((await client.getSecret("persys/db"))?.data).toEqual({ username: "persys", password: "s3cr3t-pa55" });
  });

  it("retries with backoff while Vault is sealed, then renews", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vault("approle-login.json");
    const errors: VaultError[] = [];
    await connect({ onError: (e) => errors.push(e), retryDelayMs: 1000 });
    const sealed = { ...recorded("sealed.json"), path: "/v1/auth/token/renew-self" };
    vault(sealed);
    await vi.advanceTimersByTimeAsync((2 / 3) * HOUR_MS);
    await settle(() => errors.length > 0);
    expect(errors.map((e) => [e.code, e.retryable])).toEqual([["UNAVAILABLE", true]]);
    const renewal = vault("token-renew-self.json")[0]!;
    await vi.advanceTimersByTimeAsync(999);
    await settle();
    expect(renewal.isDone()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await settle(() => renewal.isDone());
    expect(renewal.isDone()).toBe(true);
  });

  it("a call that meets an expired token logs in again and is repeated once", async () => {
    vault("approle-login.json");
    const client = await connect();
    const expired = answered("kv-get.json", 403, recorded("token-renew-self-invalid-token.json").response);
    vault(expired, "approle-login-second.json", forToken("kv-get.json", SECOND_TOKEN));
    expect((await client.getSecret("persys/db"))?.version).toBe(1);
  });

  it("close() stops renewing", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vault("approle-login.json");
    const client = await connect();
    client.close();
    await vi.advanceTimersByTimeAsync(2 * HOUR_MS); // a renew-self now would hit no recorded exchange
    expect(nock.pendingMocks()).toEqual([]);
  });
});

describe("VaultClient KV v2 and transit (nock-recorded Vault responses)", () => {
  it("puts, gets and deletes a KV v2 secret", async () => {
    vault("approle-login.json", "kv-put.json", "kv-get.json", "kv-delete-metadata.json", "kv-get-missing.json");
    const client = await connect();
    expect(await client.putSecret("persys/db", { username: "persys", password: "s3cr3t-pa55" }, { cas: 0 })).toEqual({
      version: 1,
    });
    const secret = await client.getSecret("persys/db");
    expect(secret).toMatchObject({ data: { username: "persys", password: "s3cr3t-pa55" }, version: 1 });
    expect(secret!.createdTime.getTime()).toBeGreaterThan(0);
    await client.deleteSecret("persys/db");
    expect(await client.getSecret("persys/db")).toBeUndefined();
  });

  it("reads a secret whose latest version was deleted as absent", async () => {
    vault("approle-login.json", "kv-get-deleted-version.json");
    const client = await connect();
    expect(await client.getSecret("persys/db")).toBeUndefined();
  });

  it("generates a transit data key and decrypts it back", async () => {
    vault("approle-login.json", "transit-datakey.json", "transit-decrypt.json");
    const client = await connect();
    const key = await client.generateDataKey("persys-secrets");
    expect(key.plaintext).toHaveLength(32);
    expect(key.ciphertext).toMatch(/^vault:v1:/);
    expect(key.keyVersion).toBe(1);
    expect((await client.decryptDataKey("persys-secrets", key.ciphertext)).equals(key.plaintext)).toBe(true);
  });

  it("maps a ciphertext transit cannot open to INVALID_ARGUMENT", async () => {
    vault("approle-login.json", "transit-decrypt-invalid-ciphertext.json");
    const client = await connect();
    const error = await failure(client.decryptDataKey("persys-secrets", "vault:v1:AAAA"));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain("message authentication failed");
  });

  it.each([
    ["a path escaping the mount", (c: VaultClient) => c.getSecret("../sys/seal")],
    ["an absolute path", (c: VaultClient) => c.putSecret("/persys/db", {})],
    ["an empty path", (c: VaultClient) => c.deleteSecret("")],
    ["a key name with a slash", (c: VaultClient) => c.generateDataKey("a/b")],
    ["a role with a dot-dot", (c: VaultClient) => c.issueCertificate("..", { commonName: "x" })],
  ])("refuses %s with INVALID_ARGUMENT before asking Vault", async (_name, call) => {
    vault("approle-login.json");
    const client = await connect();
    const error = await call(client).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    );
    expect(error?.code).toBe("INVALID_ARGUMENT");
  });
});
