import { Etcd3, type IOptions } from "etcd3";

/** How to reach etcd. */
export interface EtcdConnection {
  /** Client URLs, e.g. `["https://etcd-0:2379"]`. */
  readonly endpoints: readonly string[];
  /** Deadline of each unary call in ms. */
  readonly timeoutMs: number;
  /** TLS material for `https://` endpoints (PEM). */
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  /** etcd user authentication. */
  readonly auth?: { readonly username: string; readonly password: string };
}

type GlobalPolicy = NonNullable<NonNullable<IOptions["faultHandling"]>["global"]>;

/**
 * etcd3's default global policy retries every failed call, writes included, even when the failure (a
 * deadline) does not say whether etcd applied it; a retried compare-guarded transaction then reports
 * `succeeded: false` for a write that did succeed (a won leader campaign reported as lost). This policy
 * runs each call once; the store retries only idempotent calls. (etcd3 only calls `execute` on it.)
 */
const RUN_ONCE = {
  execute: (fn: (context: { signal: AbortSignal; attempt: number }) => unknown) =>
    Promise.resolve().then(() => fn({ signal: new AbortController().signal, attempt: 0 })),
} as unknown as GlobalPolicy;

/**
 * grpc-js keeps every message of a call for transparent retries until the call's buffer (1 MiB by
 * default) is full, and after each message it sends it copies the rest of that buffer. On the one
 * long-lived LeaseKeepAlive stream (hundreds of renewals a second) a backlog then costs quadratic CPU:
 * measured 190 µs per renewal in bursts of 5,000, against 18 µs with this limit, and a control plane
 * under load fell from 444 to 62 placements/s. Past this many bytes a call's messages go straight to
 * the transport, paced by the transport, and are not replayed (the store retries idempotent calls).
 */
const RETRY_BUFFER_BYTES_PER_CALL = 4096;

/**
 * An etcd3 client with a deadline on every unary call and no automatic retries. With several endpoints
 * each host keeps etcd3's circuit breaker (after three consecutive failures it fails calls fast for five
 * seconds), which steers calls to healthy members; with one endpoint there is nowhere to steer to, so
 * calls always go through and fail on their own (a breaker would only turn a blip into 5 s of errors).
 */
export function etcdClient(connection: EtcdConnection): Etcd3 {
  const { tls, auth, timeoutMs } = connection;
  return new Etcd3({
    hosts: [...connection.endpoints],
    dialTimeout: timeoutMs,
    grpcOptions: { "grpc.per_rpc_retry_buffer_size": RETRY_BUFFER_BYTES_PER_CALL },
    faultHandling: {
      global: RUN_ONCE,
      ...(connection.endpoints.length === 1 ? { host: () => RUN_ONCE as never } : {}),
    },
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + timeoutMs }),
    ...(tls
      ? {
          credentials: {
            rootCertificate: tls.ca,
            ...(tls.key ? { privateKey: tls.key } : {}),
            ...(tls.cert ? { certChain: tls.cert } : {}),
          },
        }
      : {}),
    ...(auth ? { auth: { username: auth.username, password: auth.password } } : {}),
  });
}
