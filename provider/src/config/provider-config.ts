/**
 * The provider's configuration (`persys:endpoint`, `persys:caCert`, `persys:clientCert`,
 * `persys:clientKey`, `persys:token`) and the SDK client it makes. Each setting comes from the
 * Pulumi config first, then from `PERSYS_ENDPOINT`, `PERSYS_CA_CERT`, `PERSYS_CLIENT_CERT`,
 * `PERSYS_CLIENT_KEY`, `PERSYS_TOKEN` and the persysctl config file, as `@persys/sdk` discovers
 * them; with nothing set the endpoint is `127.0.0.1:7070` (`persys up`).
 */
import { discoverClientOptions, type PersysClientOptions, type TlsOptions } from "@persys/sdk";

/** The configuration keys, as in the package schema's `config.variables`. */
export const CONFIG_KEYS = ["endpoint", "caCert", "clientCert", "clientKey", "token"] as const;
/** Configuration keys that are secrets (the engine keeps them encrypted in state). */
export const SECRET_CONFIG_KEYS = ["clientKey", "token"] as const;

export type ProviderConfig = Partial<Record<(typeof CONFIG_KEYS)[number], string>>;

/** The known, non-empty string settings of a Configure request's arguments. */
export function providerConfigOf(args: Record<string, unknown>): ProviderConfig {
  const config: ProviderConfig = {};
  for (const key of CONFIG_KEYS) {
    const value = args[key];
    if (typeof value === "string" && value !== "") config[key] = value;
  }
  return config;
}

/**
 * Client options for the configuration: explicit settings win, the rest is discovered from `env`
 * and the config file. PEM settings may be inline PEM or file paths.
 *
 * @throws PersysError INVALID_CONFIG for a malformed persysctl config file.
 */
export function clientOptionsOf(
  config: ProviderConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): PersysClientOptions {
  const discovered = discoverClientOptions({ env }).options;
  const found = typeof discovered.tls === "object" ? discovered.tls : {};
  const tls: TlsOptions = {
    ...found,
    ...(config.caCert ? { caCert: config.caCert } : {}),
    ...(config.clientCert ? { clientCert: config.clientCert } : {}),
    ...(config.clientKey ? { clientKey: config.clientKey } : {}),
  };
  const anyTls = Object.values(tls).some((v) => v !== undefined);
  return {
    ...discovered,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.token ? { token: config.token } : {}),
    ...(anyTls ? { tls } : discovered.tls === undefined ? {} : { tls: discovered.tls }),
  };
}
