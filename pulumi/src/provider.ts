import * as pulumi from "@pulumi/pulumi";

/** Inputs of {@link Provider}; each falls back to its `PERSYS_*` environment variable. */
export interface ProviderArgs {
  /** `host:port` of the control plane's gRPC API (`https://` for TLS). Env PERSYS_ENDPOINT; default 127.0.0.1:7070. */
  endpoint?: pulumi.Input<string>;
  /** CA certificate (PEM or file path). Env PERSYS_CA_CERT. */
  caCert?: pulumi.Input<string>;
  /** Client certificate for mTLS (PEM or file path). Env PERSYS_CLIENT_CERT. */
  clientCert?: pulumi.Input<string>;
  /** Key of clientCert (PEM or file path); kept secret. Env PERSYS_CLIENT_KEY. */
  clientKey?: pulumi.Input<string>;
  /** Bearer token; kept secret. Env PERSYS_TOKEN. */
  token?: pulumi.Input<string>;
}

/** Provider input names, as in the schema's `provider.inputProperties`. */
export const PROVIDER_INPUTS = ["endpoint", "caCert", "clientCert", "clientKey", "token"] as const;

/**
 * An explicit Persys provider, for a second cluster or settings other than the stack config
 * (`persys:endpoint`, ...). Pass it as `{ provider }` to resources.
 */
export class Provider extends pulumi.ProviderResource {
  constructor(name: string, args: ProviderArgs = {}, opts?: pulumi.ResourceOptions) {
    const props: pulumi.Inputs = {
      endpoint: args.endpoint,
      caCert: args.caCert,
      clientCert: args.clientCert,
      clientKey: args.clientKey === undefined ? undefined : pulumi.secret(args.clientKey),
      token: args.token === undefined ? undefined : pulumi.secret(args.token),
    };
    super("persys", name, props, opts);
  }
}
