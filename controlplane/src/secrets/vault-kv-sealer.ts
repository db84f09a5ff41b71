import { PersysError } from "@persys/schema";
import type { VaultClient } from "../vault/vault-client.js";
import type { SecretSealer } from "./secret-store.js";

/**
 * Keeps secret values in Vault KV v2 instead of the state store: `seal` writes the value to
 * `<kv mount>/data/<prefix>/<secret>/v<version>` and returns a reference (the state store holds only
 * that); `open` reads it back. The AAD (`persys-secret:<name>:<version>`) names the path, so a
 * reference cannot be swapped between secrets.
 */
export class VaultKvSealer implements SecretSealer {
  constructor(
    private readonly vault: Pick<VaultClient, "getSecret" | "putSecret">,
    private readonly prefix = "persys/secrets",
  ) {}

  private path(aad: string): string {
    const match = /^persys-secret:([a-z0-9-]+):(\d+)$/.exec(aad);
    if (!match) throw new PersysError("INTERNAL", `unexpected secret context ${aad}`);
    return `${this.prefix}/${match[1]}/v${match[2]}`;
  }

  async seal(plaintext: Buffer, aad: string): Promise<string> {
    const path = this.path(aad);
    await this.vault.putSecret(path, { value: plaintext.toString("base64") });
    return JSON.stringify({ vaultKv: path });
  }

  async open(envelope: Buffer | string, aad: string): Promise<Buffer> {
    const reference = JSON.parse(envelope.toString()) as { vaultKv?: unknown };
    const path = this.path(aad);
    if (reference.vaultKv !== path) {
      throw new PersysError("INTERNAL", `the stored reference ${String(reference.vaultKv)} is not the one of ${aad}`);
    }
    const secret = await this.vault.getSecret(path);
    const value = secret?.data.value;
    if (typeof value !== "string") throw new PersysError("INTERNAL", `Vault has no value at ${path}`);
    return Buffer.from(value, "base64");
  }
}
