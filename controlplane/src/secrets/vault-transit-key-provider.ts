import type { VaultClient } from "../vault/vault-client.js";
import { EnvelopeError, type KeyProvider } from "./key-provider.js";

/**
 * Production key provider: data keys from Vault transit (`transit/datakey/plaintext/<key>`), unwrapped
 * with `transit/decrypt/<key>`. The KEK never leaves Vault; rotate it in Vault
 * (`vault write -f transit/keys/<key>/rotate`): older versions keep decrypting while
 * `min_decryption_version` allows.
 *
 * The context is not sent to Vault (that needs a derived transit key); the envelope binds the value to
 * its secret version with its own AAD. Vault failures pass through as `VaultError`s (UNAVAILABLE when
 * sealed or unreachable, retryable; PERMISSION_DENIED; ...), except that a ciphertext transit refuses is
 * an {@link EnvelopeError} `unwrap-failed`.
 */
export class VaultTransitKeyProvider implements KeyProvider {
  readonly kind = "vault-transit" as const;

  constructor(
    private readonly vault: Pick<VaultClient, "generateDataKey" | "decryptDataKey">,
    /** The transit key name, e.g. `persys-secrets`. */
    readonly keyName: string,
  ) {}

  async generateDataKey(_context: string): Promise<{ plaintext: Buffer; wrapped: string; keyId: string }> {
    const key = await this.vault.generateDataKey(this.keyName);
    return { plaintext: key.plaintext, wrapped: key.ciphertext, keyId: this.keyName };
  }

  async unwrapDataKey(wrapped: string, keyId: string, _context: string): Promise<Buffer> {
    try {
      return await this.vault.decryptDataKey(keyId, wrapped);
    } catch (error) {
      if ((error as { code?: string }).code === "INVALID_ARGUMENT") {
        throw new EnvelopeError(
          "unwrap-failed",
          `Vault transit key ${keyId} cannot unwrap the secret's data key: ${(error as Error).message}`,
        );
      }
      throw error;
    }
  }
}
