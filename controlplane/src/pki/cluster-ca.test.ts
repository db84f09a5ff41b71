import { X509Certificate as NodeX509Certificate } from "node:crypto";
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { CA_CERT_FILE, CA_KEY_FILE, ClusterCa, DEFAULT_CA_VALIDITY_MS, type IssuedCertificate } from "./cluster-ca.js";
import { x509 } from "./ec-keys.js";
import { PkiError, type PkiErrorReason } from "./pki-error.js";
import { principalFromCertificate } from "./principal.js";
import { temporaryDirs, tlsHandshake } from "./testing/tls-test-support.js";

const dirs = temporaryDirs("persys-pki-ca-");
afterEach(() => dirs.cleanup());

const DAY = 24 * 60 * 60 * 1000;

async function failure(promise: Promise<unknown>): Promise<PersysError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PersysError);
  return error as PersysError;
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

/** Verifies `leaf` was signed by `ca` with node:crypto (independent of the library that made it). */
function verifiedBy(leaf: IssuedCertificate, caPem: string): boolean {
  const caCert = new NodeX509Certificate(caPem);
  const cert = new NodeX509Certificate(leaf.certPem);
  return cert.checkIssued(caCert) && cert.verify(caCert.publicKey);
}

describe("ClusterCa.loadOrCreate", () => {
  it("creates ca.crt and ca.key on first start (key 0600, folder 0700) and loads the same CA after", async () => {
    const dir = join(dirs.make(), "pki");
    const first = await ClusterCa.loadOrCreate(dir);
    expect(first.created).toBe(true);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, CA_KEY_FILE))).toBe(0o600);
    expect(mode(join(dir, CA_CERT_FILE))).toBe(0o644);
    expect(readFileSync(join(dir, CA_KEY_FILE), "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(readFileSync(join(dir, CA_CERT_FILE), "utf8")).toBe(first.certPem);

    const again = await ClusterCa.loadOrCreate(dir);
    expect(again.created).toBe(false);
    expect(again.certPem).toBe(first.certPem);
    // The loaded key signs certificates the first CA's certificate verifies.
    expect(verifiedBy(await again.issueUser("alice", "admin"), first.certPem)).toBe(true);
  });

  it("makes a 10-year, self-signed P-256 CA with CA:true, keyCertSign and key ids", async () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const ca = await ClusterCa.loadOrCreate(dirs.make(), { now: () => now });
    const cert = new NodeX509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.checkIssued(cert) && cert.verify(cert.publicKey)).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    expect(Date.parse(cert.validTo) - now).toBe(DEFAULT_CA_VALIDITY_MS);
    const parsed = new x509.X509Certificate(ca.certPem);
    expect(parsed.getExtension(x509.BasicConstraintsExtension)?.critical).toBe(true);
    const usages = parsed.getExtension(x509.KeyUsagesExtension)!.usages;
    expect(usages & x509.KeyUsageFlags.keyCertSign).toBeTruthy();
    const ski = parsed.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId;
    expect(parsed.getExtension(x509.AuthorityKeyIdentifierExtension)!.keyId).toBe(ski);
  });

  it("creates exactly one CA when several starts race", async () => {
    const dir = dirs.make();
    const cas = await Promise.allSettled(Array.from({ length: 4 }, () => ClusterCa.loadOrCreate(dir)));
    const loaded = cas.filter((r) => r.status === "fulfilled").map((r) => r.value);
    expect(loaded.length).toBeGreaterThan(0);
    const onDisk = readFileSync(join(dir, CA_CERT_FILE), "utf8");
    for (const ca of loaded) expect(ca.certPem).toBe(onDisk);
  });

  const refusals: [string, PkiErrorReason, string, (dir: string) => void][] = [
    ["a key readable by the group", "key-permissions", CA_KEY_FILE, (d) => chmodSync(join(d, CA_KEY_FILE), 0o640)],
    ["a world-readable key", "key-permissions", CA_KEY_FILE, (d) => chmodSync(join(d, CA_KEY_FILE), 0o644)],
    ["a missing key", "incomplete", CA_KEY_FILE, (d) => rmSync(join(d, CA_KEY_FILE))],
    ["a missing certificate", "incomplete", CA_CERT_FILE, (d) => rmSync(join(d, CA_CERT_FILE))],
    ["a certificate that is not PEM", "unreadable", CA_CERT_FILE, (d) => writeFileSync(join(d, CA_CERT_FILE), "x")],
    ["a key that is not PEM", "unreadable", CA_KEY_FILE, (d) => writeFileSync(join(d, CA_KEY_FILE), "x")],
  ];
  it.each(refusals)("refuses %s (%s in %s), changing nothing", async (_name, reason, file, damage) => {
    const dir = dirs.make();
    await ClusterCa.loadOrCreate(dir);
    damage(dir);
    const before = [CA_CERT_FILE, CA_KEY_FILE].map((f) => {
      try {
        return readFileSync(join(dir, f), "utf8");
      } catch {
        return undefined;
      }
    });
    const error = await failure(ClusterCa.loadOrCreate(dir));
    expect(error).toBeInstanceOf(PkiError);
    expect(error.code).toBe("INVALID_CONFIG");
    expect((error as PkiError).reason).toBe(reason);
    expect((error as PkiError).path).toBe(join(dir, file));
    expect(error.details).toEqual([{ path: join(dir, file), reason }]);
    const after = [CA_CERT_FILE, CA_KEY_FILE].map((f) => {
      try {
        return readFileSync(join(dir, f), "utf8");
      } catch {
        return undefined;
      }
    });
    expect(after).toEqual(before);
  });

  it("names the fix in the permission error", async () => {
    const dir = dirs.make();
    await ClusterCa.loadOrCreate(dir);
    chmodSync(join(dir, CA_KEY_FILE), 0o604);
    const error = await failure(ClusterCa.loadOrCreate(dir));
    expect(error.message).toContain("mode 0604");
    expect(error.message).toContain(`chmod 600 ${join(dir, CA_KEY_FILE)}`);
  });

  it("refuses a key that belongs to another CA (key-mismatch)", async () => {
    const dir = dirs.make();
    await ClusterCa.loadOrCreate(dir);
    const { keyPem } = await ClusterCa.generate();
    writeFileSync(join(dir, CA_KEY_FILE), keyPem, { mode: 0o600 });
    const error = await failure(ClusterCa.loadOrCreate(dir));
    expect((error as PkiError).reason).toBe("key-mismatch");
  });

  it("refuses a leaf certificate in place of the CA (not-a-ca)", async () => {
    const dir = dirs.make();
    const ca = await ClusterCa.loadOrCreate(dir);
    const leaf = await ca.issueUser("alice", "admin");
    writeFileSync(join(dir, CA_CERT_FILE), leaf.certPem);
    writeFileSync(join(dir, CA_KEY_FILE), leaf.keyPem, { mode: 0o600 });
    const error = await failure(ClusterCa.loadOrCreate(dir));
    expect((error as PkiError).reason).toBe("not-a-ca");
  });

  it("a PkiError is a PersysError, but not every PersysError is a PkiError", () => {
    const error = new PkiError("incomplete", "/x", "m");
    expect(error).toBeInstanceOf(PersysError);
    expect(new PersysError("INVALID_CONFIG", "m")).not.toBeInstanceOf(PkiError);
  });
});

describe("ClusterCa.issue", () => {
  it("issues a server certificate with the extensions TLS peers check", async () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const { ca } = await ClusterCa.generate({ now: () => now });
    const issued = await ca.issue({
      commonName: "web",
      organization: "viewer",
      dnsNames: ["localhost", "*.persys.internal"],
      ipAddresses: ["127.0.0.1", "::1"],
      usage: "server",
      validityMs: 7 * DAY,
    });
    expect(verifiedBy(issued, ca.certPem)).toBe(true);
    expect(issued.caPem).toBe(ca.certPem);
    expect(issued.notAfter.getTime()).toBe(now + 7 * DAY);
    expect(issued.notBefore.getTime()).toBeLessThan(now);
    const cert = new x509.X509Certificate(issued.certPem);
    expect(issued.serial).toBe(cert.serialNumber.toLowerCase());
    expect(issued.serial).toMatch(/^[0-9a-f]{32}$/);
    const constraints = cert.getExtension(x509.BasicConstraintsExtension)!;
    expect([constraints.ca, constraints.critical]).toEqual([false, true]);
    expect(cert.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    const sans = cert.getExtension(x509.SubjectAlternativeNameExtension)!.names.toJSON();
    expect(sans).toEqual([
      { type: "dns", value: "localhost" },
      { type: "dns", value: "*.persys.internal" },
      { type: "ip", value: "127.0.0.1" },
      { type: "ip", value: "::1" },
    ]);
    const caKeyId = new x509.X509Certificate(ca.certPem).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId;
    expect(cert.getExtension(x509.AuthorityKeyIdentifierExtension)!.keyId).toBe(caKeyId);
    expect(cert.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId).not.toBe(caKeyId);
    const nodeCert = new NodeX509Certificate(issued.certPem);
    expect(nodeCert.checkHost("localhost")).toBe("localhost");
    expect(nodeCert.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(nodeCert.ca).toBe(false);
  });

  it.each<[string, "server" | "client" | "both", string[]]>([
    ["server", "server", [x509.ExtendedKeyUsage.serverAuth]],
    ["client", "client", [x509.ExtendedKeyUsage.clientAuth]],
    ["both", "both", [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]],
  ])("usage %s sets extKeyUsage", async (_name, usage, expected) => {
    const { ca } = await ClusterCa.generate();
    const issued = await ca.issue({ commonName: "x", usage, dnsNames: ["x"], validityMs: DAY });
    const cert = new x509.X509Certificate(issued.certPem);
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual(expected);
  });

  it("gives every certificate a new key and a random serial", async () => {
    const { ca } = await ClusterCa.generate();
    const issued = await Promise.all(Array.from({ length: 5 }, () => ca.issueUser("alice", "viewer")));
    expect(new Set(issued.map((i) => i.serial)).size).toBe(5);
    expect(new Set(issued.map((i) => i.keyPem)).size).toBe(5);
  });

  it("cuts a leaf's lifetime to the CA's own end", async () => {
    const now = Date.now();
    const { ca } = await ClusterCa.generate({ caValidityMs: 10 * DAY, now: () => now });
    const issued = await ca.issueUser("alice", "admin", { validityMs: 365 * DAY });
    expect(issued.notAfter.getTime()).toBe(ca.notAfter.getTime());
  });

  it("uses the configured default lifetimes for servers, agents and users", async () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const { ca } = await ClusterCa.generate({ now: () => now, leafValidity: { agentMs: 2 * DAY } });
    expect((await ca.issueServer(["localhost"])).notAfter.getTime()).toBe(now + 30 * DAY);
    expect((await ca.issueAgent("n1")).notAfter.getTime()).toBe(now + 2 * DAY);
    expect((await ca.issueUser("bob", "operator")).notAfter.getTime()).toBe(now + 365 * DAY);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ["an empty CN", { commonName: "", usage: "client", validityMs: DAY }, ["commonName"]],
    ["a bad DNS name", { commonName: "x", usage: "server", dnsNames: ["a..b"], validityMs: DAY }, ["dnsNames[0]"]],
    ["a bad IP", { commonName: "x", usage: "server", ipAddresses: ["300.1.1.1"], validityMs: DAY }, ["ipAddresses[0]"]],
    ["a server certificate without SAN", { commonName: "x", usage: "server", validityMs: DAY }, ["dnsNames"]],
    ["an unknown usage", { commonName: "x", usage: "signing", dnsNames: ["x"], validityMs: DAY }, ["usage"]],
    ["zero validity", { commonName: "x", usage: "client", validityMs: 0 }, ["validityMs"]],
  ])("refuses %s with INVALID_ARGUMENT naming %s", async (_name, request, paths) => {
    const { ca } = await ClusterCa.generate();
    const error = await failure(ca.issue(request as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.details.map((d) => d.path)).toEqual(paths);
  });

  it.each<[string, () => Promise<unknown>, string[]]>([
    ["a user name with a colon", () => ca().then((c) => c.issueUser("node:x", "admin")), ["name"]],
    ["an unknown role", () => ca().then((c) => c.issueUser("alice", "root" as never)), ["role"]],
    ["a node id with a slash", () => ca().then((c) => c.issueAgent("a/b")), ["nodeId"]],
  ])("the shorthands refuse %s", async (_name, run, paths) => {
    const error = await failure(run());
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.details.map((d) => d.path)).toEqual(paths);
  });
});

async function ca(): Promise<ClusterCa> {
  return (await ClusterCa.generate()).ca;
}

describe("identity convention", () => {
  it("issueUser, issueAgent and issueServer name the principal authorisation reads back", async () => {
    const { ca } = await ClusterCa.generate();
    expect(principalFromCertificate((await ca.issueUser("alice", "operator")).certPem)).toEqual({
      name: "alice",
      role: "operator",
    });
    expect(principalFromCertificate((await ca.issueAgent("node-7", { hosts: ["10.0.0.7"] })).certPem)).toEqual({
      name: "node:node-7",
      role: "agent",
      nodeId: "node-7",
    });
    expect(principalFromCertificate((await ca.issueServer(["localhost"])).certPem)).toEqual({
      name: "control-plane",
      role: "control-plane",
    });
  });

  it("an agent certificate with hosts can serve TLS as well as be a client", async () => {
    const { ca } = await ClusterCa.generate();
    const agent = new x509.X509Certificate((await ca.issueAgent("n1", { hosts: ["10.0.0.7", "n1.lan"] })).certPem);
    expect(agent.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toHaveLength(2);
    const bare = new x509.X509Certificate((await ca.issueAgent("n1")).certPem);
    expect(bare.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.clientAuth]);
  });
});

describe("TLS with issued certificates (node:tls on 127.0.0.1)", () => {
  async function setup() {
    const { ca } = await ClusterCa.generate();
    const server = await ca.issueServer(["localhost", "127.0.0.1"]);
    return { ca, server: { certPem: server.certPem, keyPem: server.keyPem, caPem: ca.certPem } };
  }

  it("completes mTLS; each side sees the other's identity", async () => {
    const { ca, server } = await setup();
    const user = await ca.issueUser("alice", "admin");
    const result = await tlsHandshake(server, { certPem: user.certPem, keyPem: user.keyPem, caPem: user.caPem });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(principalFromCertificate(result.serverSawClient)).toEqual({ name: "alice", role: "admin" });
    expect(principalFromCertificate(result.clientSawServer)).toEqual({ name: "control-plane", role: "control-plane" });
  });

  it("completes mTLS with an agent certificate", async () => {
    const { ca, server } = await setup();
    const agent = await ca.issueAgent("n1");
    const result = await tlsHandshake(server, { certPem: agent.certPem, keyPem: agent.keyPem, caPem: ca.certPem });
    expect(result.ok && principalFromCertificate(result.serverSawClient)?.nodeId).toBe("n1");
  });

  it.each([false, true])("rejects a client certificate from another CA (inspect: %s)", async (inspect) => {
    const { ca, server } = await setup();
    const { ca: other } = await ClusterCa.generate();
    const stranger = await other.issueUser("mallory", "admin");
    const client = { certPem: stranger.certPem, keyPem: stranger.keyPem, caPem: ca.certPem };
    const result = await tlsHandshake(server, client, { inspect });
    expect(result.ok).toBe(false);
    if (inspect && !result.ok) expect(result.serverError).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
  });

  it.each([false, true])("rejects an expired client certificate (inspect: %s)", async (inspect) => {
    const { ca, server } = await setup();
    const expired = await ca.issueUser("alice", "admin", {
      notBefore: new Date(Date.now() - 2 * DAY),
      validityMs: DAY,
    });
    expect(expired.notAfter.getTime()).toBeLessThan(Date.now());
    const client = { certPem: expired.certPem, keyPem: expired.keyPem, caPem: ca.certPem };
    const result = await tlsHandshake(server, client, { inspect });
    expect(result.ok).toBe(false);
    if (inspect && !result.ok) expect(result.serverError).toBe("CERT_HAS_EXPIRED");
  });

  it("rejects a client without a certificate", async () => {
    const { ca, server } = await setup();
    const result = await tlsHandshake(server, { caPem: ca.certPem }, { inspect: true });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.serverError).toBe("UNABLE_TO_GET_ISSUER_CERT");
  });

  it("the client rejects an expired server certificate", async () => {
    const { ca } = await ClusterCa.generate();
    const server = await ca.issueServer(["localhost"], { notBefore: new Date(Date.now() - 2 * DAY), validityMs: DAY });
    const user = await ca.issueUser("alice", "admin");
    const result = await tlsHandshake(
      { certPem: server.certPem, keyPem: server.keyPem, caPem: ca.certPem },
      { certPem: user.certPem, keyPem: user.keyPem, caPem: ca.certPem },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.clientError).toMatch(/certificate has expired/i);
  });

  it("the client rejects a server certificate without the host it dialled", async () => {
    const { ca } = await ClusterCa.generate();
    const server = await ca.issueServer(["persys.example"]);
    const user = await ca.issueUser("alice", "admin");
    const result = await tlsHandshake(
      { certPem: server.certPem, keyPem: server.keyPem, caPem: ca.certPem },
      { certPem: user.certPem, keyPem: user.keyPem, caPem: ca.certPem },
      { servername: "localhost" },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.clientError).toMatch(/altnames|Hostname/i);
  });

  it("a server-only certificate cannot be used as a client certificate", async () => {
    const { ca, server } = await setup();
    const serverOnly = await ca.issue({ commonName: "x", usage: "server", dnsNames: ["x"], validityMs: DAY });
    const client = { certPem: serverOnly.certPem, keyPem: serverOnly.keyPem, caPem: ca.certPem };
    const result = await tlsHandshake(server, client, { inspect: true });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.serverError).toBe("INVALID_PURPOSE");
  });
});
