import { X509Certificate } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfigPath, saveContext, useContext } from "@persys/schema";
import type { ApiTokenStore } from "../auth/api-tokens.js";
import type { CertificateIssuer } from "../pki/certificate-issuer.js";
import { renewalTime } from "../pki/certificate-rotation.js";
import { KEY_DIR_MODE, KEY_FILE_MODE, writeFileAtomic } from "../pki/private-file.js";

function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: KEY_DIR_MODE });
  chmodSync(dir, KEY_DIR_MODE);
}

/** Files `persys up` leaves for the local admin and agent. */
export interface LocalCredentials {
  /** The cluster CA certificate. */
  readonly caFile: string;
  readonly adminCertFile: string;
  readonly adminKeyFile: string;
  /** The admin bearer token (for browsers and curl), kept in `<dataDir>/pki/admin.token`. */
  readonly adminToken: string;
  /** The persysctl context written, and the file it is in (absent with `context: false`). */
  readonly context?: { readonly name: string; readonly file: string };
}

/** Whether a PEM certificate file exists and has more than a third of its lifetime left. */
function fresh(certFile: string): boolean {
  if (!existsSync(certFile)) return false;
  try {
    const cert = new X509Certificate(readFileSync(certFile));
    return Date.now() < renewalTime({ notBefore: new Date(cert.validFrom), notAfter: new Date(cert.validTo) }, 1 / 3);
  } catch {
    return false;
  }
}

/**
 * What a single-node cluster needs to be used securely right away: the local agent's certificate in
 * `<dataDir>/agent/tls` (CN `node:<nodeId>`), an admin client certificate and an admin token in
 * `<dataDir>/pki`, and a persysctl context (`persys-up`, made current) in the client config file
 * (`PERSYS_CONFIG` or `~/.persys/config.yaml`). Certificates are re-issued when a third of their
 * lifetime is left; the token is kept while it still verifies.
 */
export async function prepareLocalCredentials(options: {
  readonly ca: CertificateIssuer;
  readonly tokens: ApiTokenStore;
  readonly dataDir: string;
  readonly nodeId?: string;
  /** Hosts in the agent's server certificate (the control plane dials it there). */
  readonly agentHosts?: readonly string[];
  readonly grpcAddress: string;
  /** Write and select the `persys-up` persysctl context. Default true. */
  readonly context?: boolean;
  readonly env?: Readonly<Record<string, string | undefined>>;
}): Promise<LocalCredentials> {
  const pki = join(options.dataDir, "pki");
  privateDir(pki);
  const caFile = join(pki, "ca.crt");
  if (options.nodeId) {
    const tls = join(options.dataDir, "agent", "tls");
    const certFile = join(tls, "node.crt");
    if (!fresh(certFile)) {
      const agent = await options.ca.issueAgent(options.nodeId, {
        hosts: options.agentHosts ?? ["127.0.0.1", "localhost"],
      });
      privateDir(tls);
      await writeFileAtomic(join(tls, "node.key"), agent.keyPem, KEY_FILE_MODE);
      await writeFileAtomic(join(tls, "ca.crt"), options.ca.certPem, 0o644);
      await writeFileAtomic(certFile, agent.certPem, 0o644);
    }
  }
  const adminCertFile = join(pki, "admin.crt");
  const adminKeyFile = join(pki, "admin.key");
  if (!fresh(adminCertFile)) {
    const admin = await options.ca.issueUser("admin", "admin");
    await writeFileAtomic(adminKeyFile, admin.keyPem, KEY_FILE_MODE);
    await writeFileAtomic(adminCertFile, admin.certPem, 0o644);
  }
  const tokenFile = join(pki, "admin.token");
  let adminToken = existsSync(tokenFile) ? readFileSync(tokenFile, "utf8").trim() : "";
  const valid = adminToken
    ? await options.tokens.verify(adminToken).then(
        () => true,
        () => false,
      )
    : false;
  if (!valid) {
    adminToken = (await options.tokens.create({ name: "admin", role: "admin" })).token;
    await writeFileAtomic(tokenFile, `${adminToken}\n`, KEY_FILE_MODE);
  }
  if (options.context === false) return { caFile, adminCertFile, adminKeyFile, adminToken };
  const file = defaultConfigPath(options.env ?? process.env);
  const name = "persys-up";
  saveContext(file, {
    name,
    endpoint: `https://${options.grpcAddress}`,
    caCert: caFile,
    clientCert: adminCertFile,
    clientKey: adminKeyFile,
  });
  useContext(file, name);
  return { caFile, adminCertFile, adminKeyFile, adminToken, context: { name, file } };
}
