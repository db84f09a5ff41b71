import { X509Certificate } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { invalid, ReloadableCertificates, type TlsMaterial } from "@persys/schema";
import type { Logger } from "pino";
import type { AgentConfig } from "../config/agent-config.js";
import { writeAtomic } from "./join-cluster.js";

/** Where the agent's certificate, key and the cluster CA live (defaults under `<stateDir>/tls`). */
export function agentTlsPaths(config: AgentConfig): { certFile: string; keyFile: string; caFile: string; dir: string } {
  const dir = join(config.stateDir, "tls");
  return {
    dir,
    certFile: config.tls.certFile || join(dir, "node.crt"),
    keyFile: config.tls.keyFile || join(dir, "node.key"),
    caFile: config.tls.caFile || join(dir, "ca.crt"),
  };
}

function read(paths: ReturnType<typeof agentTlsPaths>): TlsMaterial {
  return {
    certPem: readFileSync(paths.certFile, "utf8"),
    keyPem: readFileSync(paths.keyFile, "utf8"),
    caPem: readFileSync(paths.caFile, "utf8"),
  };
}

/** The agent's TLS material, re-read from its files every `reloadMs` so a renewed certificate is picked up. */
export interface AgentTls {
  readonly certificates: ReloadableCertificates;
  close(): void;
}

/**
 * Loads the node's certificate (joining the cluster first with `tls.joinToken` when there is none yet,
 * through `join`), or `undefined` with `insecure`. Files are re-read every `reloadMs` (default 30 s):
 * new connections use a renewed certificate, open ones carry on. When a third of the certificate's
 * lifetime is left, `renew` asks the control plane for a new one and the files are replaced.
 *
 * @throws PersysError INVALID_CONFIG naming `tls.certFile` when there is no certificate and no join token.
 */
export interface AgentTlsOptions {
  /** Joins the cluster (writes the three files) when there is no certificate and `tls.joinToken` is set. */
  readonly join?: (paths: ReturnType<typeof agentTlsPaths>) => Promise<void>;
  /** Renews the node certificate through the control plane; called when a third of its lifetime is left. */
  readonly renew?: (
    paths: ReturnType<typeof agentTlsPaths>,
  ) => Promise<{ certPem: string; keyPem: string; caPem: string }>;
  /** How often files are re-read and renewal is considered (default 30 s). */
  readonly reloadMs?: number;
}

/** Whether less than a third of the certificate's lifetime is left. */
function renewalDue(certPem: string, now = Date.now()): boolean {
  const cert = new X509Certificate(certPem);
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  return now >= to - (to - from) / 3;
}

export async function loadAgentTls(
  config: AgentConfig,
  logger: Logger,
  options: AgentTlsOptions = {},
): Promise<AgentTls | undefined> {
  const { join, renew, reloadMs = 30_000 } = options;
  if (config.insecure) {
    logger.warn("agent serving and dialling without TLS and without caller checks (--insecure): development only");
    return undefined;
  }
  const paths = agentTlsPaths(config);
  const present = () => [paths.certFile, paths.keyFile, paths.caFile].every((p) => existsSync(p));
  if (!present() && config.tls.joinToken && join) await join(paths);
  if (!present()) {
    throw invalid(
      "INVALID_CONFIG",
      [
        {
          path: "tls.certFile",
          reason: `no node certificate at ${paths.certFile} (with ${paths.keyFile} and ${paths.caFile}): join with --tls-join-token (persysctl node join-token create) or pass --insecure for development`,
        },
      ],
      "agent TLS",
    );
  }
  const certificates = new ReloadableCertificates(read(paths));
  let renewing = false;
  const timer = setInterval(() => {
    if (renew && !renewing && renewalDue(certificates.current.certPem)) {
      renewing = true;
      renew(paths)
        .then(async (next) => {
          await writeAtomic(paths.keyFile, next.keyPem, 0o600);
          await writeAtomic(paths.caFile, next.caPem, 0o644);
          await writeAtomic(paths.certFile, next.certPem, 0o644);
          logger.info({ certFile: paths.certFile }, "node certificate renewed");
        })
        .catch((error) => logger.warn({ err: String(error) }, "node certificate renewal failed; retrying"))
        .finally(() => {
          renewing = false;
        });
    }
    try {
      const next = read(paths);
      const now = certificates.current;
      if (next.certPem !== now.certPem || next.keyPem !== now.keyPem || next.caPem !== now.caPem) {
        certificates.update(next);
        logger.info({ certFile: paths.certFile }, "node certificate changed on disk: reloaded");
      }
    } catch (error) {
      logger.warn({ err: String(error) }, "cannot re-read the node certificate; keeping the current one");
    }
  }, reloadMs);
  timer.unref();
  return { certificates, close: () => clearInterval(timer) };
}
