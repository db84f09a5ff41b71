import { join } from "node:path";
import type { ServerConfig } from "../config/server-config.js";
import { EnvelopeCipher } from "./envelope-cipher.js";
import { LocalKeyProvider } from "./local-key-provider.js";
import type { SecretSealer } from "./secret-store.js";

/**
 * The control plane's default secret sealer: the AES-256-GCM envelope cipher with the local KEK
 * keyring in `<dataDir>/secrets` (created on first start, 0600). Pass `ControlPlaneOptions.secretSealer`
 * (e.g. an EnvelopeCipher over a VaultTransitKeyProvider) to use another key provider.
 */
export async function defaultSecretSealer(config: Pick<ServerConfig, "dataDir">): Promise<SecretSealer> {
  return new EnvelopeCipher(await LocalKeyProvider.loadOrCreate(join(config.dataDir, "secrets")));
}
