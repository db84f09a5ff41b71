/**
 * Helpers for the PKI's tests (and the Vault and secrets tests that need real certificates): temporary
 * folders and a TLS handshake on 127.0.0.1. Not exported from the package.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, createServer, type PeerCertificate } from "node:tls";

/** Temporary folders, removed by `cleanup()` (call it in `afterEach`). */
export function temporaryDirs(prefix: string): { make(): string; cleanup(): void } {
  const dirs: string[] = [];
  return {
    make: () => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    cleanup: () => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TlsSide {
  readonly certPem?: string;
  readonly keyPem?: string;
  /** The CA(s) this side trusts. */
  readonly caPem: string;
}

export type HandshakeResult =
  | { readonly ok: true; readonly serverSawClient: PeerCertificate; readonly clientSawServer: PeerCertificate }
  | { readonly ok: false; readonly clientError?: string; readonly serverError?: string };

/**
 * One mTLS handshake between a `tls` server on 127.0.0.1 and a client connecting to `servername`.
 * Resolves with what each side saw, or the errors when it failed.
 *
 * The server requests a client certificate and, by default, rejects unverified ones as Node does with
 * `rejectUnauthorized: true` (it then drops the connection without saying why). With `inspect`, it
 * accepts the handshake, reads `authorizationError` (e.g. `CERT_HAS_EXPIRED`) into `serverError`, and
 * drops the connection itself: the same outcome, with the reason visible to the test.
 */
export async function tlsHandshake(
  server: TlsSide,
  client: TlsSide,
  options: { servername?: string; inspect?: boolean } = {},
): Promise<HandshakeResult> {
  let serverError: string | undefined;
  let serverSawClient: PeerCertificate | undefined;
  const tlsServer = createServer(
    {
      cert: server.certPem,
      key: server.keyPem,
      ca: server.caPem,
      requestCert: true,
      rejectUnauthorized: !options.inspect,
    },
    (socket) => {
      if (!socket.authorized) {
        serverError = String(socket.authorizationError);
        socket.destroy();
        return;
      }
      serverSawClient = socket.getPeerCertificate();
      socket.end("hello");
    },
  );
  tlsServer.on("tlsClientError", (error) => {
    serverError ??= error.message;
  });
  await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve));
  const { port } = tlsServer.address() as AddressInfo;
  try {
    const result = await new Promise<HandshakeResult>((resolve) => {
      const socket = connect({
        host: "127.0.0.1",
        port,
        servername: options.servername ?? "localhost",
        ca: client.caPem,
        cert: client.certPem,
        key: client.keyPem,
        rejectUnauthorized: true,
      });
      let data = "";
      socket.on("data", (chunk) => {
        data += chunk.toString();
      });
      socket.on("end", () => {
        const clientSawServer = socket.getPeerCertificate();
        socket.destroy();
        if (data === "hello" && serverSawClient) resolve({ ok: true, serverSawClient, clientSawServer });
        else resolve({ ok: false, clientError: "connection closed early" });
      });
      socket.on("error", (error) => {
        socket.destroy();
        resolve({ ok: false, clientError: error.message });
      });
    });
    return result.ok ? result : { ...result, ...(serverError ? { serverError } : {}) };
  } finally {
    await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
  }
}
