import { readFileSync } from "node:fs";
import { type ChannelCredentials, credentials } from "@grpc/grpc-js";
import { invalid } from "@persys/schema";
import type { RetryOptions } from "./retry-policy.js";

/** The gRPC port of a Persys control plane when the endpoint names none (`persys up` listens there). */
export const DEFAULT_GRPC_PORT = 7070;

/** The endpoint used when nothing else names one. */
export const DEFAULT_ENDPOINT = `127.0.0.1:${DEFAULT_GRPC_PORT}`;

/** A PEM given inline (a string starting with `-----BEGIN`, or a Buffer) or as a file path. */
export type Pem = string | Buffer;

/**
 * TLS settings. Every field is optional: `{}` (or `tls: true`) verifies the server against the
 * system roots. mTLS: give `clientCert` and `clientKey` together.
 */
export interface TlsOptions {
  /** CA certificate(s) to verify the server with, instead of the system roots. */
  readonly caCert?: Pem | undefined;
  /** Client certificate chain for mTLS. */
  readonly clientCert?: Pem | undefined;
  /** Private key of `clientCert`. */
  readonly clientKey?: Pem | undefined;
  /** Name to verify the server certificate against, when it differs from the endpoint's host. */
  readonly serverName?: string | undefined;
}

/** Options of {@link PersysClient}. Everything is optional; see {@link PersysClient.fromEnvironment} for discovery. */
export interface PersysClientOptions {
  /**
   * `host:port` of the control plane's gRPC API (default `127.0.0.1:7070`). A scheme is accepted:
   * `https://host:port` turns TLS on, `http://` and `grpc://` mean plaintext. No port: 7070.
   */
  readonly endpoint?: string | undefined;
  /** TLS (or mTLS) to the control plane. Unset: plaintext, unless the endpoint says `https://`. */
  readonly tls?: TlsOptions | boolean | undefined;
  /** Bearer token, sent as `authorization: Bearer <token>` metadata on every call. */
  readonly token?: string | undefined;
  /** Time budget of each call, retries included. Default 30 s. Streams have none. */
  readonly timeoutMs?: number | undefined;
  /** Retry policy for retryable errors; `false` disables retries. */
  readonly retry?: RetryOptions | false | undefined;
  /** Extra grpc-js channel options (e.g. `grpc.keepalive_time_ms`), passed through. */
  readonly channelOptions?: Readonly<Record<string, string | number>> | undefined;
}

/** Where to connect: a grpc-js target and whether the endpoint asked for TLS. */
export interface ParsedEndpoint {
  /** `host:port` as grpc-js wants it. */
  readonly address: string;
  /** `true` for `https://`, `false` for `http://` / `grpc://`, `undefined` without a scheme. */
  readonly tls: boolean | undefined;
}

/**
 * Parses an endpoint (`host`, `host:port`, `[::1]:7070`, `https://host:7443/`).
 *
 * @throws PersysError INVALID_CONFIG for an empty endpoint, an unknown scheme or a bad port.
 */
export function parseEndpoint(endpoint: string): ParsedEndpoint {
  const bad = (reason: string) => invalid("INVALID_CONFIG", [{ path: "endpoint", reason }], "endpoint");
  let rest = endpoint.trim();
  let tls: boolean | undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(rest);
  if (scheme) {
    const name = scheme[1]!.toLowerCase();
    if (name === "https" || name === "grpcs") tls = true;
    else if (name === "http" || name === "grpc") tls = false;
    else throw bad(`unknown scheme "${name}://" in "${endpoint}" (use host:port, https:// or http://)`);
    rest = rest.slice(scheme[0].length);
  }
  rest = rest.replace(/\/+$/, "");
  if (!rest) throw bad("is empty");
  if (rest.includes("/")) throw bad(`"${endpoint}" must be host:port without a path`);
  const ipv6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  const hostPort = ipv6 ? [`[${ipv6[1]}]`, ipv6[2]] : rest.split(":");
  if (!ipv6 && hostPort.length > 2) throw bad(`"${endpoint}": write an IPv6 address in brackets, e.g. [::1]:7070`);
  const [host, port] = hostPort;
  if (!host) throw bad(`"${endpoint}" has no host`);
  if (port !== undefined) {
    const n = Number(port);
    if (!/^\d+$/.test(port) || n < 1 || n > 65_535) throw bad(`port "${port}" must be 1..65535`);
  }
  return { address: `${host}:${port ?? DEFAULT_GRPC_PORT}`, tls };
}

/** The bytes of a PEM option: a Buffer or inline PEM as is, otherwise the file it names. */
export function readPem(value: Pem, what: string): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value.trimStart().startsWith("-----BEGIN")) return Buffer.from(value);
  try {
    return readFileSync(value);
  } catch (error) {
    throw invalid(
      "INVALID_CONFIG",
      [{ path: `tls.${what}`, reason: `cannot read ${value}: ${(error as Error).message}` }],
      "TLS settings",
    );
  }
}

/**
 * The channel credentials for the options: plaintext, TLS or mTLS. The token is not part of them
 * (it travels as metadata, so it also works on plaintext channels while the server side of auth lands).
 *
 * @throws PersysError INVALID_CONFIG for a client certificate without its key (or the reverse), or an unreadable PEM.
 */
export function channelCredentials(
  tls: TlsOptions | boolean | undefined,
  endpointTls: boolean | undefined,
): ChannelCredentials {
  const wanted = tls === undefined ? endpointTls === true : tls !== false;
  if (!wanted) return credentials.createInsecure();
  const options: TlsOptions = typeof tls === "object" ? tls : {};
  if ((options.clientCert === undefined) !== (options.clientKey === undefined)) {
    throw invalid(
      "INVALID_CONFIG",
      [
        {
          path: options.clientCert ? "tls.clientKey" : "tls.clientCert",
          reason: "mTLS needs both clientCert and clientKey",
        },
      ],
      "TLS settings",
    );
  }
  return credentials.createSsl(
    options.caCert === undefined ? null : readPem(options.caCert, "caCert"),
    options.clientKey === undefined ? null : readPem(options.clientKey, "clientKey"),
    options.clientCert === undefined ? null : readPem(options.clientCert, "clientCert"),
  );
}
