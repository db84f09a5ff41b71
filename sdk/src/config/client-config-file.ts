/**
 * The client configuration file (`~/.persys/config.yaml`). Its reader and writer live in
 * `@persys/schema`, so the server's `persys pki user --context` writes what persysctl reads; this
 * module is the SDK's documented face of them. The wrappers below make the compiler check that these
 * types and the shared ones stay assignable both ways.
 */
import * as shared from "@persys/schema";

/** One named control plane in `~/.persys/config.yaml`. */
export interface ClientContext {
  readonly name: string;
  /** gRPC endpoint, as {@link PersysClientOptions.endpoint}. */
  readonly endpoint: string;
  readonly token?: string | undefined;
  /** CA certificate: a path (relative to the config file's folder, `~` expanded) or inline PEM. */
  readonly caCert?: string | undefined;
  readonly clientCert?: string | undefined;
  readonly clientKey?: string | undefined;
}

/** The client configuration file: `{currentContext, contexts: [{name, endpoint, token?, caCert?, clientCert?, clientKey?}]}`. */
export interface ClientConfigFile {
  readonly currentContext?: string | undefined;
  readonly contexts: readonly ClientContext[];
}

/** `PERSYS_CONFIG`, else `~/.persys/config.yaml`. */
export function defaultConfigPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return shared.defaultConfigPath(env);
}

/**
 * Reads a client configuration file; `undefined` when it does not exist. Paths of certificates are
 * made absolute (relative to the file's folder, `~` expanded). A Go persysctl file (`grpc_endpoint`,
 * `ca_cert_path`, ...) reads as one context named `default`.
 *
 * @throws PersysError INVALID_CONFIG naming the file, line and key of anything malformed or unknown.
 */
export function readClientConfig(path: string): ClientConfigFile | undefined {
  return shared.readClientConfig(path);
}

/**
 * Sets `currentContext` in the file, keeping its comments and layout.
 *
 * @throws PersysError INVALID_CONFIG when the file does not exist or has no context with that name.
 */
export function useContext(path: string, name: string): void {
  shared.useContext(path, name);
}

/**
 * Adds the context, or replaces the one with the same name; creates the file (and its folder) when
 * missing, and makes the context current when the file had none. Comments elsewhere are kept.
 */
export function saveContext(path: string, context: ClientContext): void {
  shared.saveContext(path, context);
}
