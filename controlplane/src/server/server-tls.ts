import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { PersysError, ReloadableCertificates, type TlsMaterial } from "@persys/schema";
import type { Logger } from "pino";
import type { ServerConfig } from "../config/server-config.js";
import type { CertificateIssuer } from "../pki/certificate-issuer.js";
import { CertificateRotator } from "../pki/certificate-rotation.js";
import { ClusterCa } from "../pki/cluster-ca.js";
import type { VaultClient } from "../vault/vault-client.js";
import { VaultIssuer } from "../vault/vault-issuer.js";

/** The TLS of one control-plane server: its current certificate (hot-swappable) and, in cluster-CA mode, the CA. */
export interface ServerTls {
  readonly certificates: ReloadableCertificates;
  /** Who issues the cluster's certificates (the cluster CA in `<dataDir>/pki`, or Vault PKI); absent with `security.certFile`. */
  readonly ca?: CertificateIssuer;
  /** The cluster CA in the data dir, when that is the issuer (persys up and `persys pki` use its files). */
  readonly clusterCa?: ClusterCa;
  /** Folder of the cluster CA files. */
  readonly pkiDir: string;
  /** Re-issues (cluster CA) or re-reads (files) the certificate now and swaps it in. */
  rotate(): Promise<void>;
  /** Stops the renewal timer. */
  close(): void;
}

const WILDCARD = new Set(["0.0.0.0", "::", "[::]", ""]);

/** Names the server is reached at: its listen hosts (unless wildcard), loopback, the host name and any configured. */
export function serverHosts(config: ServerConfig): string[] {
  const hosts = new Set(["localhost", "127.0.0.1", "::1", hostname(), ...config.security.serverCertHosts]);
  for (const address of [config.listen.grpc, config.listen.http]) {
    const host = address.slice(0, address.lastIndexOf(":")).replace(/^\[|\]$/g, "");
    if (!WILDCARD.has(host)) hosts.add(host);
  }
  return [...hosts].filter((h) => /^[A-Za-z0-9.:-]+$/.test(h));
}

function readPemFile(path: string, field: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new PersysError("INVALID_CONFIG", `cannot read ${field} ${path}: ${(error as Error).message}`, {
      details: [{ path: `security.${field}`, reason: `cannot read ${path}` }],
    });
  }
}

/**
 * Sets up the server's TLS: with `security.certFile`/`keyFile`/`caFile` it serves those (re-read every
 * minute, so a rotated file is picked up without a restart); otherwise it loads or creates the cluster
 * CA in `<dataDir>/pki` (or, with `security.issuer: vault`, Vault PKI) and issues itself a certificate
 * for {@link serverHosts}, renewed in memory when a third of its lifetime is left. Either way, new
 * connections get the new certificate while open ones carry on.
 */
export async function setupServerTls(config: ServerConfig, logger: Logger, vault?: VaultClient): Promise<ServerTls> {
  const pkiDir = join(config.dataDir, "pki");
  const s = config.security;
  if (s.certFile && s.keyFile) {
    const read = (): TlsMaterial => ({
      certPem: readPemFile(s.certFile!, "certFile"),
      keyPem: readPemFile(s.keyFile!, "keyFile"),
      caPem: s.caFile ? readPemFile(s.caFile, "caFile") : readPemFile(s.certFile!, "certFile"),
    });
    const certificates = new ReloadableCertificates(read());
    const reload = async () => {
      const next = read();
      const now = certificates.current;
      if (next.certPem !== now.certPem || next.keyPem !== now.keyPem || next.caPem !== now.caPem) {
        certificates.update(next);
        logger.info({ certFile: s.certFile }, "TLS certificate files changed: reloaded");
      }
    };
    const timer = setInterval(() => {
      reload().catch((error) =>
        logger.warn({ err: String(error) }, "cannot re-read TLS files; keeping the current certificate"),
      );
    }, 60_000);
    timer.unref();
    return { certificates, pkiDir, rotate: reload, close: () => clearInterval(timer) };
  }
  const validityMs = s.certificateValidityHours * 3_600_000;
  const hosts = serverHosts(config);
  let ca: CertificateIssuer;
  let clusterCa: ClusterCa | undefined;
  if (s.issuer === "vault") {
    if (!vault) throw new PersysError("INVALID_CONFIG", "security.issuer vault needs vault.address");
    ca = new VaultIssuer(vault, config.vault.pkiRolePrefix);
    logger.info({ role: `${config.vault.pkiRolePrefix}control-plane` }, "certificates are issued by Vault PKI");
  } else {
    clusterCa = await ClusterCa.loadOrCreate(pkiDir, { leafValidity: { serverMs: validityMs, agentMs: validityMs } });
    if (clusterCa.created) logger.info({ pkiDir }, "created the cluster CA (first start)");
    ca = clusterCa;
  }
  // Renewed in memory when a third of the lifetime is left; failures keep the current one and retry.
  const rotator = await CertificateRotator.start({
    issue: () => ca.issueServer(hosts, { validityMs }),
    onError: (error) => logger.error({ err: String(error) }, "server certificate renewal failed; retrying"),
  });
  const certificates = new ReloadableCertificates(rotator.current);
  rotator.onRotate((material) => {
    certificates.update(material);
    logger.info({ notAfter: rotator.current.notAfter.toISOString() }, "server certificate renewed");
  });
  return {
    certificates,
    ca,
    ...(clusterCa ? { clusterCa } : {}),
    pkiDir,
    rotate: async () => {
      await rotator.rotateNow();
    },
    close: () => rotator.stop(),
  };
}
