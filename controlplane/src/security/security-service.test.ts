import { X509Certificate } from "node:crypto";
import { api, caPublicKeyPin, PersysError } from "@persys/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CallContext } from "../api/persys-api.js";
import { ApiTokenStore } from "../auth/api-tokens.js";
import type { Principal } from "../auth/principal.js";
import { ClusterCa } from "../pki/cluster-ca.js";
import { JoinTokenStore } from "../pki/join-tokens.js";
import { temporaryDirs } from "../pki/testing/tls-test-support.js";
import { openStateStore } from "../state/open-state-store.js";
import type { StateStore } from "../state/state-store.js";
import { SecurityService } from "./security-service.js";

const dirs = temporaryDirs("persys-security-");
const stores: StateStore[] = [];
let ca: ClusterCa;
beforeAll(async () => {
  ca = (await ClusterCa.generate()).ca;
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
afterAll(() => dirs.cleanup());

async function service(clock: { now: number } = { now: Date.now() }) {
  const store = await openStateStore({ kind: "embedded", dataDir: dirs.make() });
  stores.push(store);
  const now = () => clock.now;
  const tokens = new ApiTokenStore(store, "/persys/", now, 0);
  const joinTokens = new JoinTokenStore(store, { prefix: "/persys/", now });
  return { security: new SecurityService({ tokens, joinTokens, ca }), tokens, clock };
}

async function failure(p: Promise<unknown>): Promise<PersysError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PersysError);
  return error as PersysError;
}

const join = (token: string, nodeId: string) => api.JoinNodeRequest.fromPartial({ joinToken: token, nodeId });

function subject(pem: string): { cn: string; o: string } {
  const lines = new X509Certificate(pem).subject.split("\n");
  const field = (k: string) => lines.find((l) => l.startsWith(`${k}=`))?.slice(k.length + 1) ?? "";
  return { cn: field("CN"), o: field("O") };
}

describe("join tokens", () => {
  it("a token joins a node once: the certificate is node:<id>/agent, signed by the cluster CA", async () => {
    const { security } = await service();
    const created = await security.createJoinToken(api.CreateJoinTokenRequest.fromPartial({ description: "rack 4" }));
    expect(created.caCertHash).toBe(caPublicKeyPin(ca.certPem));
    expect(created.joinToken!.expiresAt!.getTime() - created.joinToken!.createdAt!.getTime()).toBe(3600_000);
    const joined = await security.joinNode(join(created.token, "n1"));
    expect(subject(joined.certPem)).toEqual({ cn: "node:n1", o: "agent" });
    expect(new X509Certificate(joined.certPem).checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(joined.keyPem).toContain("PRIVATE KEY");
    expect(joined.caPem).toBe(ca.certPem);

    const again = await failure(security.joinNode(join(created.token, "n2")));
    expect(again.code).toBe("UNAUTHENTICATED");
    expect(again.message).toContain("already been used");
    const listed = await security.listJoinTokens({});
    expect(listed.tokens).toMatchObject([
      { id: created.joinToken!.id, used: true, usedBy: "n1", description: "rack 4" },
    ]);
  });

  it("of concurrent joins with one token exactly one wins", async () => {
    const { security } = await service();
    const { token } = await security.createJoinToken(api.CreateJoinTokenRequest.fromPartial({}));
    const results = await Promise.allSettled(["a", "b", "c", "d", "e"].map((n) => security.joinNode(join(token, n))));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results.filter((r) => r.status === "rejected"))
      expect(((r as PromiseRejectedResult).reason as PersysError).code).toBe("UNAUTHENTICATED");
  });

  it("an expired token is refused", async () => {
    const { security, clock } = await service();
    const { token } = await security.createJoinToken(api.CreateJoinTokenRequest.fromPartial({ ttlSeconds: 60 }));
    clock.now += 61_000;
    const error = await failure(security.joinNode(join(token, "n1")));
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.message).toContain("expired");
  });

  it("a revoked, unknown or malformed token is refused; revoking twice is a success", async () => {
    const { security } = await service();
    const { token, joinToken } = await security.createJoinToken(api.CreateJoinTokenRequest.fromPartial({}));
    expect((await security.revokeJoinToken({ id: joinToken!.id })).revoked).toBe(true);
    expect((await security.revokeJoinToken({ id: joinToken!.id })).revoked).toBe(false);
    for (const t of [token, "abcdef.0123456789abcdef", "nonsense"])
      expect((await failure(security.joinNode(join(t, "n1")))).code).toBe("UNAUTHENTICATED");
  });

  it("bad input is refused before the token is used up", async () => {
    const { security } = await service();
    const { token } = await security.createJoinToken(api.CreateJoinTokenRequest.fromPartial({}));
    const cases: [string, api.JoinNodeRequest, string][] = [
      ["bad node id", join(token, "no spaces"), "nodeId"],
      ["a CSR this CA cannot sign", { ...join(token, "n1"), csrPem: "-----BEGIN CERTIFICATE REQUEST-----" }, "csrPem"],
    ];
    for (const [name, request, path] of cases) {
      const error = await failure(security.joinNode(request));
      expect(error.code, name).toBe("INVALID_ARGUMENT");
      expect(
        error.details.map((d) => d.path),
        name,
      ).toContain(path);
    }
    expect(subject((await security.joinNode(join(token, "n1"))).certPem).cn).toBe("node:n1");
  });

  it.each([
    ["negative ttl", { ttlSeconds: -1 }, "ttlSeconds"],
    ["too long", { ttlSeconds: 400 * 24 * 3600 }, "ttlSeconds"],
    ["long description", { description: "x".repeat(300) }, "description"],
  ])("create refuses %s", async (_name, request, path) => {
    const { security } = await service();
    const error = await failure(security.createJoinToken(api.CreateJoinTokenRequest.fromPartial(request)));
    expect(error.details.map((d) => d.path)).toContain(path);
  });
});

describe("API tokens", () => {
  it("create, verify, list without secrets, revoke", async () => {
    const { security, tokens } = await service();
    const created = await security.createApiToken({ name: "ci", role: "operator", ttlSeconds: 3600 });
    expect(created.token).toMatch(/^psy_/);
    expect(await tokens.verify(created.token)).toEqual({ name: "ci", role: "operator", via: "token" });
    const listed = await security.listApiTokens({});
    expect(listed.tokens).toMatchObject([{ id: created.apiToken!.id, name: "ci", role: "operator" }]);
    expect(JSON.stringify(api.ListApiTokensResponse.toJSON(listed))).not.toContain(created.token.split("_")[2]);
    expect((await security.revokeApiToken({ id: created.apiToken!.id })).revoked).toBe(true);
    expect((await security.revokeApiToken({ id: created.apiToken!.id })).revoked).toBe(false);
    expect((await failure(tokens.verify(created.token))).code).toBe("UNAUTHENTICATED");
  });

  it.each([
    ["bad name", { name: "a b", role: "viewer", ttlSeconds: 0 }, "name"],
    ["agent role", { name: "x", role: "agent", ttlSeconds: 0 }, "role"],
    ["negative ttl", { name: "x", role: "viewer", ttlSeconds: -5 }, "ttlSeconds"],
  ])("create refuses %s", async (_name, request, path) => {
    const { security } = await service();
    const error = await failure(security.createApiToken(request));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.details.map((d) => d.path)).toEqual([path]);
  });
});

describe("certificates and identity", () => {
  it("a user certificate has CN name and O role", async () => {
    const { security } = await service();
    const issued = await security.issueUserCertificate({ name: "alice", role: "viewer", ttlSeconds: 86_400 });
    expect(subject(issued.certPem)).toEqual({ cn: "alice", o: "viewer" });
    expect(issued.notAfter!.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect((await failure(security.issueUserCertificate({ name: "bob", role: "root", ttlSeconds: 0 }))).code).toBe(
      "INVALID_ARGUMENT",
    );
  });

  it("renewal issues a fresh node certificate", async () => {
    const { security } = await service();
    const renewed = await security.renewNodeCertificate({ nodeId: "n1", csrPem: "", hosts: ["10.0.0.5"] });
    expect(subject(renewed.certPem)).toEqual({ cn: "node:n1", o: "agent" });
    expect(new X509Certificate(renewed.certPem).subjectAltName).toContain("10.0.0.5");
  });

  it("whoAmI answers the authenticated principal", async () => {
    const { security } = await service();
    const principal: Principal = { name: "node:n1", role: "agent", nodeId: "n1", via: "certificate" };
    const ctx: CallContext = { signal: new AbortController().signal, principal };
    expect(await security.whoAmI({}, ctx)).toEqual({
      name: "node:n1",
      role: "agent",
      via: "certificate",
      nodeId: "n1",
    });
    expect((await failure(security.whoAmI({}, { signal: ctx.signal }))).code).toBe("UNAUTHENTICATED");
  });
});
