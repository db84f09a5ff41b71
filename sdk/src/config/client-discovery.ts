import { invalid } from "@persys/schema";
import { DEFAULT_ENDPOINT, type PersysClientOptions, type TlsOptions } from "../client/client-options.js";
import { type ClientContext, defaultConfigPath, readClientConfig } from "./client-config-file.js";

/** Inputs of {@link discoverClientOptions}. */
export interface DiscoveryOptions {
  /** Environment to read `PERSYS_*` from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Config file. Default `PERSYS_CONFIG`, else `~/.persys/config.yaml`. */
  readonly configPath?: string | undefined;
  /** Context to use, overriding `PERSYS_CONTEXT` and the file's `currentContext`. */
  readonly context?: string | undefined;
  /** Explicit settings; they win over everything discovered. */
  readonly overrides?: PersysClientOptions | undefined;
}

/** Where the endpoint came from, for `persysctl config` and error messages. */
export type EndpointSource = "explicit" | "environment" | "context" | "default";

/** What discovery found: options for {@link PersysClient} and where they came from. */
export interface DiscoveredClientOptions {
  readonly options: PersysClientOptions;
  readonly endpoint: string;
  readonly endpointSource: EndpointSource;
  /** The context used, when one was. */
  readonly context: ClientContext | undefined;
  readonly configPath: string;
}

/**
 * Finds how to reach the control plane. Each setting comes from the first of: `overrides`; the
 * context named by `context` (when given explicitly); the environment (`PERSYS_ENDPOINT`,
 * `PERSYS_TOKEN`, `PERSYS_CA_CERT`, `PERSYS_CLIENT_CERT`, `PERSYS_CLIENT_KEY`); the context named by
 * `PERSYS_CONTEXT` or the file's `currentContext`; the default endpoint `127.0.0.1:7070`.
 * A missing config file is not an error. Reads files; never connects.
 *
 * @throws PersysError INVALID_CONFIG for a malformed config file or a context that does not exist.
 */
export function discoverClientOptions(options: DiscoveryOptions = {}): DiscoveredClientOptions {
  const env = options.env ?? process.env;
  const configPath = options.configPath ?? defaultConfigPath(env);
  const file = readClientConfig(configPath);
  const wanted = options.context ?? (env.PERSYS_CONTEXT || undefined) ?? file?.currentContext;
  let context: ClientContext | undefined;
  if (wanted !== undefined) {
    context = file?.contexts.find((c) => c.name === wanted);
    if (!context && (options.context !== undefined || env.PERSYS_CONTEXT)) {
      const known = file?.contexts.map((c) => c.name).join(", ") || "none";
      throw invalid("INVALID_CONFIG", [
        { path: "context", reason: `no context "${wanted}" in ${configPath} (have: ${known})` },
      ]);
    }
  }
  const explicitContext = options.context !== undefined ? context : undefined;
  const fromEnv = {
    endpoint: env.PERSYS_ENDPOINT || undefined,
    token: env.PERSYS_TOKEN || undefined,
    caCert: env.PERSYS_CA_CERT || undefined,
    clientCert: env.PERSYS_CLIENT_CERT || undefined,
    clientKey: env.PERSYS_CLIENT_KEY || undefined,
  };
  const pick = <K extends keyof typeof fromEnv>(key: K): string | undefined =>
    explicitContext?.[key] ?? fromEnv[key] ?? context?.[key];
  const o = options.overrides ?? {};
  const endpoint = o.endpoint ?? pick("endpoint") ?? DEFAULT_ENDPOINT;
  const endpointSource: EndpointSource =
    o.endpoint !== undefined
      ? "explicit"
      : explicitContext
        ? "context"
        : fromEnv.endpoint
          ? "environment"
          : context
            ? "context"
            : "default";
  const tlsFields: TlsOptions = {
    caCert: pick("caCert"),
    clientCert: pick("clientCert"),
    clientKey: pick("clientKey"),
  };
  const anyTls = Object.values(tlsFields).some((v) => v !== undefined);
  const tls = o.tls ?? (anyTls ? tlsFields : undefined);
  const token = o.token ?? pick("token");
  return {
    options: {
      ...o,
      endpoint,
      ...(tls === undefined ? {} : { tls }),
      ...(token === undefined ? {} : { token }),
    },
    endpoint,
    endpointSource,
    context,
    configPath,
  };
}
