/**
 * Production mode with Vault, against nock-recorded Vault responses (no Vault server runs here; the
 * recordings are controlplane/src/vault/testdata, whose certificate chain is real): the server logs in
 * with AppRole, serves the certificate Vault PKI issued, and seals secrets with data keys from transit.
 * The control plane itself is real (embedded stores, real gRPC and TLS).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { PersysClient } from "@persys/sdk";
import nock from "nock";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningServer, runServer } from "../../controlplane/src/cli/run-server.js";
import { loadServerConfig } from "../../controlplane/src/config/server-config.js";
import { scratchDir } from "../sdk/sdk-cluster.js";

const testdata = join(import.meta.dirname, "../../controlplane/src/vault/testdata");
type Definition = nock.Definition & { rawHeaders?: string[]; response?: any };
const recorded = (name: string): Definition => JSON.parse(readFileSync(join(testdata, name), "utf8"));
const APPROLE = recorded("approle-login.json").body as { role_id: string; secret_id: string };
/** The issue request's SANs depend on this host: match any body, answer the recording. */
const anyBody = (d: Definition): Definition => {
  const { body: _body, ...rest } = d;
  return rest as Definition;
};
const vaultCa = () => {
  const data = recorded("pki-issue.json").response.data as { issuing_ca: string; ca_chain?: string[] };
  return data.ca_chain?.join("\n") ?? data.issuing_ca;
};

const running: RunningServer[] = [];
const clients: PersysClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const r of running.splice(0)) await r.close();
  nock.cleanAll();
});

function config(dataDir: string, backend: "vault-transit" | "local" = "vault-transit") {
  const secretIdFile = join(dataDir, "secret-id");
  writeFileSync(secretIdFile, `${APPROLE.secret_id}\n`, { mode: 0o600 });
  return loadServerConfig({
    flags: {
      "data-dir": dataDir,
      "listen-grpc": "127.0.0.1:0",
      "listen-http": "127.0.0.1:0",
      "log-level": "silent",
      "security-issuer": "vault",
      "vault-address": "https://vault.persys.test:8200",
      "vault-auth-method": "approle",
      "vault-role-id": APPROLE.role_id,
      "vault-secret-id-file": secretIdFile,
      "vault-pki-role-prefix": "persys-",
      "secrets-backend": backend,
    },
  });
}

describe("Vault mode (nock-recorded Vault responses)", () => {
  it("serves the certificate Vault PKI issued after an AppRole login, and seals secrets with transit data keys", async () => {
    const issue = recorded("pki-issue.json");
    const scopes = nock.define([
      recorded("approle-login.json"),
      anyBody({ ...issue, path: "/v1/pki/issue/persys-control-plane" }),
      recorded("transit-datakey.json"),
    ]);
    const dataDir = scratchDir("vault-mode-");
    const server = await runServer(config(dataDir), { logger: pino({ level: "silent" }) });
    running.push(server);
    await server.controlPlane.whenLeader();
    const served = server.tls!.certificates.current;
    expect(served.certPem.trim()).toBe((issue.response.data.certificate as string).trim());
    const { token } = await server.controlPlane.tokens.create({ name: "ci", role: "operator" });
    // A client that trusts only Vault's CA reaches the server: its certificate is Vault's.
    const client = new PersysClient({ endpoint: server.grpcAddress, tls: { caCert: vaultCa() }, token, retry: false });
    clients.push(client);
    await expect(client.cluster.summary()).resolves.toBeDefined();
    await client.secrets.put("db", { password: "s3cr3t-vault-value" });
    for (const scope of scopes) expect(scope.isDone()).toBe(true);
    // Only the envelope (a transit-wrapped data key and the ciphertext) is stored.
    const stateDir = join(dataDir, "state");
    const stored = readdirSync(stateDir)
      .map((f) => readFileSync(join(stateDir, f)).toString("latin1"))
      .join("");
    expect(stored).not.toContain("s3cr3t-vault-value");
    expect(stored).toContain("vault:v1:");
  });

  it("refuses to start while Vault is sealed, with a retryable UNAVAILABLE naming Vault", async () => {
    nock.define([recorded("sealed.json")]);
    const error = await runServer(config(scratchDir("vault-sealed-")), { logger: pino({ level: "silent" }) }).then(
      (r) => (running.push(r), undefined),
      (e: unknown) => e as PersysError,
    );
    expect(error).toBeInstanceOf(PersysError);
    expect(error?.code).toBe("UNAVAILABLE");
    expect(error?.retryable).toBe(true);
    expect(error?.message).toMatch(/sealed/i);
  });

  it("names the field when Vault settings are missing", () => {
    expect(() => loadServerConfig({ flags: { "security-issuer": "vault" } })).toThrow(PersysError);
    try {
      loadServerConfig({ flags: { "secrets-backend": "vault-kv" } });
    } catch (error) {
      expect((error as PersysError).details).toEqual([
        { path: "secrets.backend", reason: "vault-kv needs vault.address" },
      ]);
    }
  });
});
