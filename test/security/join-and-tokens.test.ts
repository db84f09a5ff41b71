/**
 * Identities end to end on a real control plane (real etcd and Redis, TLS with its cluster CA): API
 * tokens, one-time join tokens with which an agent gets its node certificate (CA trusted by pin, as
 * kubeadm's discovery hash), user certificates through persysctl, and who may do what.
 */

import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { caPublicKeyPin, PersysError, readClientConfig } from "@persys/schema";
import { PersysClient } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinCluster, renewNodeCertificate } from "../../agent/src/control/join-cluster.js";
import { type RunningServer, runServer } from "../../controlplane/src/cli/run-server.js";
import type { ClusterCa } from "../../controlplane/src/pki/cluster-ca.js";
import type { CliIo } from "../../sdk/src/cli/cli-io.js";
import { runCli } from "../../sdk/src/cli/program.js";
import { testConfig } from "../controlplane/control-plane-harness.js";
import { runDir } from "../support/services.js";
import { httpsJson } from "./support/https-json.js";

let server: RunningServer;
let ca: ClusterCa;
let adminToken: string;
const clients: PersysClient[] = [];

beforeAll(async () => {
  server = await runServer(testConfig({ insecure: "false" }));
  ca = server.tls!.clusterCa!;
  // The first admin credential, as `persys up` makes it: straight from the store, not through the API.
  adminToken = (await server.controlPlane.tokens.create({ name: "root", role: "admin" })).token;
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server?.close();
});

function client(token: string): PersysClient {
  const c = new PersysClient({
    endpoint: server.grpcAddress,
    tls: { caCert: ca.certPem },
    token,
    retry: false,
    timeoutMs: 10_000,
  });
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<PersysError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof PersysError)) throw new Error(`expected a PersysError, got ${String(error)}`);
  return error;
}

const scratch = () => mkdtempSync(join(runDir(), "join-"));

/** Polls `check` until it returns something truthy (events are written asynchronously). */
async function until<T>(check: () => Promise<T | false>, timeoutMs = 10_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}
const cnOf = (pem: string) => /(?:^|\n)CN=([^\n]*)/.exec(new X509Certificate(pem).subject)?.[1];

/** Runs persysctl in-process with `env`; returns the exit code and what it printed. */
async function persysctl(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d) => (out += d));
  stderr.on("data", (d) => (err += d));
  const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env, now: () => new Date() };
  const code = await runCli(args, io);
  return { code, out, err };
}

describe("joining with a one-time token", () => {
  it("a node joins with the token and the CA pin, gets node:<id> signed by the cluster CA; the second use is refused", async () => {
    const admin = client(adminToken);
    const created = await admin.security.createJoinToken({ ttlMs: 3_600_000, description: "rack 4" });
    expect(created.caCertHash).toBe(caPublicKeyPin(ca.certPem));

    const dir = scratch();
    const joined = await joinCluster({
      controlPlane: server.grpcAddress,
      joinToken: created.token,
      nodeId: "n1",
      trust: { caCertHash: created.caCertHash },
      dir,
    });
    expect(joined.joined).toBe(true);
    const cert = readFileSync(joined.files.certPath, "utf8");
    expect(cnOf(cert)).toBe("node:n1");
    expect(new X509Certificate(cert).checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(readFileSync(joined.files.caPath, "utf8")).toBe(ca.certPem);
    expect(statSync(joined.files.keyPath).mode & 0o777).toBe(0o600);

    // Restarting the agent with the same flags keeps its identity and does not touch the token.
    const again = await joinCluster({
      controlPlane: server.grpcAddress,
      joinToken: created.token,
      nodeId: "n1",
      trust: { caCertHash: created.caCertHash },
      dir,
    });
    expect(again).toMatchObject({ joined: false });
    expect(readFileSync(joined.files.certPath, "utf8")).toBe(cert);

    const second = await failure(
      joinCluster({
        controlPlane: server.grpcAddress,
        joinToken: created.token,
        nodeId: "n2",
        trust: { caFile: joined.files.caPath },
        dir: scratch(),
      }),
    );
    expect(second.code).toBe("UNAUTHENTICATED");
    expect(second.message).toContain("already been used");
    const listed = await admin.security.listJoinTokens();
    expect(listed.find((t) => t.id === created.joinToken.id)).toMatchObject({ used: true, usedBy: "n1" });

    // Every join attempt is audited, and no audit record carries the token or a key.
    const audited = await until(async () => {
      const events = await admin.events.list({ types: ["RequestAudited"], nodeId: "n2" }).toArray();
      return events.some((e) => e.message.includes("joinNode: UNAUTHENTICATED")) && events;
    });
    const all = JSON.stringify(await admin.events.list({ types: ["RequestAudited"] }).toArray());
    expect(audited.length).toBeGreaterThan(0);
    expect(all).not.toContain(created.token.split(".")[1]);
    expect(all).not.toContain("PRIVATE KEY");
  });

  it("an expired token is refused", async () => {
    const { token, caCertHash } = await client(adminToken).security.createJoinToken({ ttlMs: 1_000 });
    await new Promise((r) => setTimeout(r, 1_200));
    const error = await failure(
      joinCluster({
        controlPlane: server.grpcAddress,
        joinToken: token,
        nodeId: "n3",
        trust: { caCertHash },
        dir: scratch(),
      }),
    );
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.message).toContain("expired");
  });

  it("a wrong CA pin stops the join before the token is sent", async () => {
    const { token } = await client(adminToken).security.createJoinToken({});
    const wrong = `sha256:${"0".repeat(64)}`;
    const error = await failure(
      joinCluster({
        controlPlane: server.grpcAddress,
        joinToken: token,
        nodeId: "n4",
        trust: { caCertHash: wrong },
        dir: scratch(),
      }),
    );
    expect(error.code).toBe("INVALID_CONFIG");
    // The token was never presented, so it still works.
    const ok = await joinCluster({
      controlPlane: server.grpcAddress,
      joinToken: token,
      nodeId: "n4",
      trust: { caCertHash: caPublicKeyPin(ca.certPem) },
      dir: scratch(),
    });
    expect(ok.joined).toBe(true);
  });

  it("an agent renews its own node's certificate only", async () => {
    const { token, caCertHash } = await client(adminToken).security.createJoinToken({});
    const joined = await joinCluster({
      controlPlane: server.grpcAddress,
      joinToken: token,
      nodeId: "n5",
      trust: { caCertHash },
      dir: scratch(),
    });
    const renew = (nodeId: string) =>
      renewNodeCertificate({ controlPlane: server.grpcAddress, nodeId, files: joined.files });
    const own = await renew("n5");
    expect(cnOf(own.certPem)).toBe("node:n5");
    expect(own.keyPem).toContain("PRIVATE KEY");
    expect(own.notAfter.getTime()).toBeGreaterThan(Date.now());
    expect((await failure(renew("n1"))).code).toBe("PERMISSION_DENIED");
  });
});

describe("API tokens and roles", () => {
  it("a viewer token reads but cannot create join tokens; revoked tokens stop working", async () => {
    const admin = client(adminToken);
    const viewerToken = (await admin.security.createApiToken({ name: "dash", role: "viewer", ttlMs: 3_600_000 })).token;
    const viewer = client(viewerToken);
    expect(await viewer.security.whoAmI()).toEqual({ name: "dash", role: "viewer", via: "token" });
    expect((await failure(viewer.security.createJoinToken({}))).code).toBe("PERMISSION_DENIED");
    expect((await failure(viewer.security.createApiToken({ name: "x", role: "admin" }))).code).toBe(
      "PERMISSION_DENIED",
    );

    const listed = await admin.security.listApiTokens();
    const dash = listed.find((t) => t.name === "dash")!;
    expect(JSON.stringify(listed)).not.toContain(viewerToken.split("_")[2]);
    expect(await admin.security.revokeApiToken(dash.id)).toBe(true);
    expect(await admin.security.revokeApiToken(dash.id)).toBe(false);
    await new Promise((r) => setTimeout(r, 5_500)); // the verification cache's period
    expect((await failure(viewer.security.whoAmI())).code).toBe("UNAUTHENTICATED");
  });

  it("REST: whoami, token create/list and a public join", async () => {
    const rest = (method: string, path: string, token?: string, body?: unknown) =>
      httpsJson(method, `${server.httpUrl}${path}`, {
        ca: ca.certPem,
        ...(token ? { token } : {}),
        ...(body ? { body } : {}),
      });
    expect((await rest("GET", "/v1/whoami", adminToken)).body).toMatchObject({
      name: "root",
      role: "admin",
      via: "token",
    });
    expect((await rest("GET", "/v1/whoami")).status).toBe(401);
    const created = await rest("POST", "/v1/join-tokens", adminToken, { ttlSeconds: 600 });
    expect(created.status).toBe(200);
    const joined = await rest("POST", "/v1/nodes/n6/join", undefined, { joinToken: created.body.token });
    expect(joined.status).toBe(200);
    expect(cnOf(joined.body.certPem)).toBe("node:n6");
    expect((await rest("POST", "/v1/nodes/n7/join", undefined, { joinToken: created.body.token })).status).toBe(401);
    expect((await rest("GET", "/v1/tokens", adminToken)).body.tokens.map((t: { name: string }) => t.name)).toContain(
      "root",
    );
  });
});

describe("persysctl", () => {
  it("whoami with a token prints the name and role", async () => {
    const ciToken = (await client(adminToken).security.createApiToken({ name: "ci", role: "operator" })).token;
    const env = { HOME: scratch(), PERSYS_CA_CERT: ca.certPem, PERSYS_ENDPOINT: server.grpcAddress };
    const result = await persysctl(["--token", ciToken, "whoami"], env);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    expect(result.out).toBe("ci (role operator, via token)\n");
    const json = await persysctl(["--token", ciToken, "whoami", "-o", "json"], env);
    expect(JSON.parse(json.out)).toEqual({ name: "ci", role: "operator", via: "token" });
  });

  it("token create and node join-token create print the secret once; a viewer is refused", async () => {
    const env = {
      HOME: scratch(),
      PERSYS_CA_CERT: ca.certPem,
      PERSYS_ENDPOINT: server.grpcAddress,
      PERSYS_TOKEN: adminToken,
    };
    const token = await persysctl(["token", "create", "--name", "bot", "--role", "viewer", "--ttl", "24h"], env);
    expect(token.code).toBe(0);
    expect(token.out).toMatch(/^psy_\w+\n$/);
    const viewerEnv = { ...env, PERSYS_TOKEN: token.out.trim() };
    const refused = await persysctl(["node", "join-token", "create", "--ttl", "1h"], viewerEnv);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("PERMISSION_DENIED");
    const join = await persysctl(["node", "join-token", "create", "--ttl", "1h", "-o", "json"], env);
    expect(join.code).toBe(0);
    const body = JSON.parse(join.out);
    expect(body.token).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    expect(body.caCertHash).toBe(caPublicKeyPin(ca.certPem));
    const list = await persysctl(["node", "join-token", "list"], env);
    expect(list.out).toContain(body.joinToken.id);
  });

  it("user cert writes the files and a context that authenticates by certificate", async () => {
    const home = scratch();
    const config = join(home, "config.yaml");
    const env = {
      HOME: home,
      PERSYS_CA_CERT: ca.certPem,
      PERSYS_ENDPOINT: server.grpcAddress,
      PERSYS_TOKEN: adminToken,
    };
    const issued = await persysctl(
      ["--config", config, "user", "cert", "vera", "--role", "viewer", "--context", "vera"],
      env,
    );
    expect(issued.err).toBe("");
    expect(issued.code).toBe(0);
    const context = readClientConfig(config)!.contexts.find((c) => c.name === "vera")!;
    expect(context.clientKey).toBe(join(home, ".persys", "certs", "vera", "vera.key"));
    expect(statSync(context.clientKey!).mode & 0o777).toBe(0o600);
    expect(cnOf(readFileSync(context.clientCert!, "utf8"))).toBe("vera");
    const me = await persysctl(["--config", config, "--context", "vera", "whoami"], { HOME: home });
    expect(me.err).toBe("");
    expect(me.out).toBe("vera (role viewer, via certificate)\n");
  });
});
