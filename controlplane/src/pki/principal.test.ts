import { X509Certificate as NodeX509Certificate } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { ClusterCa } from "./cluster-ca.js";
import { x509 } from "./ec-keys.js";
import { type CertificateLike, certificateSubject, type Principal, principalFromCertificate } from "./principal.js";

let ca: ClusterCa;
beforeAll(async () => {
  ca = (await ClusterCa.generate()).ca;
});

/** A client certificate with exactly this subject (attributes as given, repeats allowed). */
async function withSubject(subject: x509.JsonName): Promise<string> {
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: subject,
    keys: keys as never,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" } as never,
  });
  return cert.toString("pem");
}

describe("principalFromCertificate", () => {
  it.each<[string, x509.JsonName, Principal | undefined]>([
    ["a user", [{ CN: ["alice"] }, { O: ["admin"] }], { name: "alice", role: "admin" }],
    [
      "an e-mail-like user",
      [{ CN: ["ci@example.com"] }, { O: ["viewer"] }],
      { name: "ci@example.com", role: "viewer" },
    ],
    [
      "an agent",
      [{ CN: ["node:n-1.rack"] }, { O: ["agent"] }],
      { name: "node:n-1.rack", role: "agent", nodeId: "n-1.rack" },
    ],
    [
      "the control plane",
      [{ CN: ["control-plane"] }, { O: ["control-plane"] }],
      { name: "control-plane", role: "control-plane" },
    ],
    ["an unknown role", [{ CN: ["alice"] }, { O: ["root"] }], undefined],
    ["no O", [{ CN: ["alice"] }], undefined],
    ["no CN", [{ O: ["admin"] }], undefined],
    ["two O", [{ CN: ["alice"] }, { O: ["viewer"] }, { O: ["admin"] }], undefined],
    ["two CN", [{ CN: ["alice"] }, { CN: ["bob"] }, { O: ["admin"] }], undefined],
    ["an agent without the node: prefix", [{ CN: ["n1"] }, { O: ["agent"] }], undefined],
    ["an agent with an empty node id", [{ CN: ["node:"] }, { O: ["agent"] }], undefined],
    ["an agent with a slash in its node id", [{ CN: ["node:a/b"] }, { O: ["agent"] }], undefined],
    ["a user posing as a node", [{ CN: ["node:n1"] }, { O: ["admin"] }], undefined],
    ["a control plane with another name", [{ CN: ["alice"] }, { O: ["control-plane"] }], undefined],
    ["a role in another case", [{ CN: ["alice"] }, { O: ["Admin"] }], undefined],
  ])("%s", async (_name, subject, expected) => {
    expect(principalFromCertificate(await withSubject(subject))).toEqual(expected);
  });

  it("reads every form of certificate the same", async () => {
    const { certPem } = await ca.issueAgent("n1");
    const forms: [string, CertificateLike][] = [
      ["PEM", certPem],
      ["DER bytes", new Uint8Array(new NodeX509Certificate(certPem).raw)],
      ["node:crypto X509Certificate", new NodeX509Certificate(certPem)],
      ["@peculiar/x509 certificate", new x509.X509Certificate(certPem)],
      ["a PeerCertificate-like object with raw", { raw: new NodeX509Certificate(certPem).raw }],
      ["subject parts", { subject: { CN: "node:n1", O: "agent" } }],
    ];
    for (const [name, form] of forms) {
      expect(principalFromCertificate(form), name).toEqual({ name: "node:n1", role: "agent", nodeId: "n1" });
    }
  });

  it("treats repeated subject parts (arrays, as tls gives them) as no principal", () => {
    expect(principalFromCertificate({ subject: { CN: ["a", "b"], O: "admin" } })).toBeUndefined();
  });

  it("is undefined for what is not a certificate", () => {
    expect(principalFromCertificate("not a certificate")).toBeUndefined();
    expect(principalFromCertificate(new Uint8Array([1, 2, 3]))).toBeUndefined();
    expect(principalFromCertificate({ subject: {} })).toBeUndefined();
  });
});

describe("certificateSubject", () => {
  it("gives the CN and O as auth/principal's CallCredentials expect", async () => {
    expect(certificateSubject((await ca.issueUser("alice", "operator")).certPem)).toEqual({
      commonName: "alice",
      organization: "operator",
    });
    expect(certificateSubject(await withSubject([{ CN: ["x"] }]))).toEqual({ commonName: "x" });
  });

  it("is undefined for a repeated attribute or garbage", async () => {
    expect(certificateSubject(await withSubject([{ CN: ["x"] }, { O: ["a"] }, { O: ["b"] }]))).toBeUndefined();
    expect(certificateSubject("garbage")).toBeUndefined();
  });
});
