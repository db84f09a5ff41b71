import { readFileSync } from "node:fs";
import { invalid } from "@persys/schema";
import type { Logger } from "pino";
import type { ServerConfig } from "../config/server-config.js";
import { type VaultAuth, VaultClient } from "./vault-client.js";

function readSecretFile(path: string, field: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw invalid("INVALID_CONFIG", [{ path: field, reason: `cannot read ${path}: ${(error as Error).message}` }]);
  }
}

/**
 * Logs in to the configured Vault (token or AppRole) and starts renewing, or `undefined` when no
 * `vault.address` is set.
 *
 * @throws PersysError INVALID_CONFIG for a missing token or unreadable secret-id file; Vault's own
 * failures as typed errors (UNAVAILABLE when sealed or unreachable, PERMISSION_DENIED, UNAUTHENTICATED).
 */
export async function connectVault(config: ServerConfig, logger: Logger): Promise<VaultClient | undefined> {
  const v = config.vault;
  if (!v.address) return undefined;
  let auth: VaultAuth;
  if (v.authMethod === "approle") {
    auth = {
      method: "approle",
      roleId: v.roleId!,
      secretId: readSecretFile(v.secretIdFile!, "vault.secretIdFile"),
      mount: v.approleMount,
    };
  } else {
    if (!v.token)
      throw invalid("INVALID_CONFIG", [
        { path: "vault.token", reason: "token login needs vault.token (env PERSYS_VAULT_TOKEN)" },
      ]);
    auth = { method: "token", token: v.token };
  }
  const client = await VaultClient.connect({
    endpoint: v.address,
    auth,
    ...(v.namespace ? { namespace: v.namespace } : {}),
    ...(v.caFile ? { tls: { caPem: readSecretFile(v.caFile, "vault.caFile") } } : {}),
    mounts: { kv: v.kvMount, pki: v.pkiMount, transit: v.transitMount },
    onError: (error) => logger.warn({ err: error.message, code: error.code }, "Vault token renewal failed; retrying"),
  });
  logger.info({ vault: v.address, auth: v.authMethod }, "logged in to Vault");
  return client;
}
