/**
 * Joining a cluster, as `kubeadm join` does: the agent trusts the cluster CA (from a PEM file, or
 * fetched and checked against a `sha256:<hex>` pin of its public key), then exchanges a one-time join
 * token for the certificate of its node id over TLS verified with that CA, and keeps it in a folder.
 *
 * ```ts
 * const joined = await joinCluster({
 *   controlPlane: "cp.example:7070",
 *   joinToken: "abcdef.0123456789abcdef",
 *   nodeId: "n1",
 *   trust: { caCertHash: "sha256:9f2c..." },
 *   dir: "/var/lib/persys-agent/tls",
 * });
 * // joined.files.certPath, keyPath (0600), caPath; joined.joined is false when the files were there already
 * ```
 */
import { X509Certificate } from "node:crypto";
import { chmod, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { type ClientHttp2Session, connect, constants as h2 } from "node:http2";
import { isIP } from "node:net";
import { join } from "node:path";
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { api, CA_PIN_PATTERN, caPublicKeyPin, PersysError, persysErrorFromServiceError } from "@persys/schema";

/** How the agent decides to trust the control plane before it has a certificate. */
export type JoinTrust =
  /** A PEM file of the cluster CA (e.g. copied from `<dataDir>/pki/ca.crt`). */
  | { readonly caFile: string }
  /** The pin printed by `persysctl node join-token create` / `persys pki ca`. */
  | { readonly caCertHash: string }
  /** Plaintext, nothing verified: only for control planes started with `--insecure` (development). */
  | { readonly insecure: true };

export interface JoinClusterOptions {
  /** The control plane's gRPC endpoint: `host:port`, `https://host:port` (or `http://` with `insecure`). */
  readonly controlPlane: string;
  readonly joinToken: string;
  readonly nodeId: string;
  readonly trust: JoinTrust;
  /** Folder of the files (created with mode 0700); each can be placed elsewhere with `files`. */
  readonly dir: string;
  readonly files?: Partial<JoinedFiles>;
  /** Names and addresses the agent's own gRPC endpoint is reached at (server SANs of its certificate). */
  readonly hosts?: readonly string[];
  /** Per call; default 15 s. */
  readonly timeoutMs?: number;
}

/** Where the node's identity is kept. */
export interface JoinedFiles {
  /** `node.crt`: CN `node:<id>`, O `agent`. */
  readonly certPath: string;
  /** `node.key`, mode 0600. */
  readonly keyPath: string;
  /** `ca.crt`: the cluster CA. */
  readonly caPath: string;
}

export interface JoinResult {
  readonly files: JoinedFiles;
  /** `false`: the folder held a certificate for this node already, and nothing was changed. */
  readonly joined: boolean;
  readonly notAfter: Date;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const SERVICE = "/persys.api.v1.SecurityService";

const config = (message: string, path: string, reason: string) =>
  new PersysError("INVALID_CONFIG", message, { details: [{ path, reason }] });

/**
 * Joins once: when the files exist and hold a certificate for `nodeId`, they are kept (the token is
 * not used, so restarting an agent with the same flags is harmless). Otherwise fetches or reads the
 * CA, calls JoinNode over TLS verified against it, and writes the files atomically (key first, mode
 * 0600).
 *
 * @throws PersysError INVALID_CONFIG for a bad endpoint or pin, unreadable files, a certificate there
 * for another node, or a CA that does not match the pin; UNAUTHENTICATED for a used, expired or
 * unknown token; UNAVAILABLE when the control plane cannot be reached.
 */
export async function joinCluster(options: JoinClusterOptions): Promise<JoinResult> {
  const files: JoinedFiles = {
    certPath: options.files?.certPath ?? join(options.dir, "node.crt"),
    keyPath: options.files?.keyPath ?? join(options.dir, "node.key"),
    caPath: options.files?.caPath ?? join(options.dir, "ca.crt"),
  };
  const existing = await existingIdentity(files, options.nodeId);
  if (existing) return { files, joined: false, notAfter: existing };
  const endpoint = parseEndpoint(options.controlPlane, "insecure" in options.trust);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const caPem = await trustedCa(options.trust, endpoint, timeoutMs);
  const response = await callJoinNode(endpoint.address, caPem, timeoutMs, {
    joinToken: options.joinToken,
    nodeId: options.nodeId,
    csrPem: "",
    hosts: [...(options.hosts ?? [])],
  });
  if (caPem !== undefined && response.caPem.trim() !== caPem.trim() && !issuedBy(response.certPem, caPem)) {
    throw new PersysError("INTERNAL", "the control plane returned a certificate not signed by the trusted CA");
  }
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  await writeAtomic(files.keyPath, response.keyPem, 0o600);
  await writeAtomic(files.certPath, response.certPem, 0o644);
  await writeAtomic(files.caPath, response.caPem, 0o644);
  return {
    files,
    joined: true,
    notAfter: response.notAfter ?? new Date(new X509Certificate(response.certPem).validTo),
  };
}

/** The expiry of a certificate already in place for `nodeId`, or `undefined` when there is none. */
async function existingIdentity(files: JoinedFiles, nodeId: string): Promise<Date | undefined> {
  const present = await Promise.all([files.certPath, files.keyPath, files.caPath].map(exists));
  if (!present.every(Boolean)) return undefined;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(await readFile(files.certPath));
  } catch {
    throw config(`${files.certPath} is not a PEM certificate; remove it to join again`, "certFile", "unreadable");
  }
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
  if (cn !== `node:${nodeId}`) {
    throw config(
      `${files.certPath} is the certificate of ${cn ?? "an unknown subject"}, not node:${nodeId}; remove the files to join as ${nodeId}`,
      "certFile",
      "belongs to another node",
    );
  }
  return new Date(cert.validTo);
}

interface Endpoint {
  readonly address: string;
  readonly host: string;
  readonly tls: boolean;
}

function parseEndpoint(text: string, insecure: boolean): Endpoint {
  const match = /^(?:(https|grpcs|http|grpc):\/\/)?(\[[^\]]+\]|[^:/]+)(?::(\d{1,5}))?\/?$/.exec(text.trim());
  if (!match) throw config(`control plane endpoint "${text}" is not host:port`, "controlPlane", "not host:port");
  const [, scheme, host = "", port = "7070"] = match;
  const plain = scheme === "http" || scheme === "grpc";
  if (plain && !insecure) {
    throw config(`joining over plaintext (${text}) needs the insecure trust mode`, "controlPlane", "plaintext");
  }
  return { address: `${host}:${port}`, host: host.replace(/^\[|\]$/g, ""), tls: !insecure };
}

/** The CA to verify the control plane with; `undefined` in insecure mode. */
async function trustedCa(trust: JoinTrust, endpoint: Endpoint, timeoutMs: number): Promise<string | undefined> {
  if ("insecure" in trust) return undefined;
  if ("caFile" in trust) {
    try {
      const pem = await readFile(trust.caFile, "utf8");
      new X509Certificate(pem);
      return pem;
    } catch (error) {
      throw config(
        `cannot read the CA certificate ${trust.caFile}: ${(error as Error).message}`,
        "caFile",
        "unreadable",
      );
    }
  }
  const wanted = trust.caCertHash.trim().toLowerCase();
  if (!CA_PIN_PATTERN.test(wanted)) {
    throw config(`CA pin "${trust.caCertHash}" is not sha256:<64 hex digits>`, "caCertHash", "malformed");
  }
  const fetched = await fetchCaUnverified(endpoint, timeoutMs);
  let pin: string;
  try {
    pin = caPublicKeyPin(fetched);
  } catch {
    throw new PersysError("INVALID_CONFIG", `the control plane at ${endpoint.address} sent no valid CA certificate`);
  }
  if (pin !== wanted) {
    throw config(
      `the CA of ${endpoint.address} has pin ${pin}, not ${wanted}: wrong cluster, or someone in between`,
      "caCertHash",
      "does not match the server's CA",
    );
  }
  return fetched;
}

/**
 * `GetClusterCa` over TLS without verifying the server (nothing secret is sent; the answer is checked
 * against the pin before anything is trusted). grpc-js always verifies, so this one call is framed by
 * hand over HTTP/2.
 */
async function fetchCaUnverified(endpoint: Endpoint, timeoutMs: number): Promise<string> {
  const session: ClientHttp2Session = connect(`https://${endpoint.address}`, {
    rejectUnauthorized: false,
    ALPNProtocols: ["h2"],
    // SNI carries host names only (RFC 6066); an empty name sends none for an IP address.
    servername: isIP(endpoint.host) === 0 ? endpoint.host : "",
  });
  try {
    const body = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(unavailable(endpoint, "timed out")), timeoutMs);
      session.on("error", (error) => {
        clearTimeout(timer);
        reject(unavailable(endpoint, error.message));
      });
      const message = api.GetClusterCaRequest.encode({}).finish();
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      const stream = session.request({
        [h2.HTTP2_HEADER_METHOD]: "POST",
        [h2.HTTP2_HEADER_PATH]: `${SERVICE}/GetClusterCa`,
        [h2.HTTP2_HEADER_CONTENT_TYPE]: "application/grpc",
        te: "trailers",
      });
      const chunks: Buffer[] = [];
      let grpcStatus: string | undefined;
      let grpcMessage = "";
      const note = (headers: Record<string, unknown>) => {
        if (headers["grpc-status"] !== undefined) grpcStatus = String(headers["grpc-status"]);
        if (headers["grpc-message"] !== undefined) grpcMessage = decodeURIComponent(String(headers["grpc-message"]));
      };
      stream.on("response", note);
      stream.on("trailers", note);
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", (error) => {
        clearTimeout(timer);
        reject(unavailable(endpoint, error.message));
      });
      stream.on("end", () => {
        clearTimeout(timer);
        if (grpcStatus !== "0") {
          reject(
            new PersysError(
              "UNAVAILABLE",
              `GetClusterCa at ${endpoint.address} failed: ${grpcMessage || `status ${grpcStatus}`}`,
            ),
          );
          return;
        }
        resolve(Buffer.concat(chunks));
      });
      stream.end(frame);
    });
    if (body.length < 5 || body[0] !== 0) throw unavailable(endpoint, "malformed gRPC answer");
    const length = body.readUInt32BE(1);
    return api.GetClusterCaResponse.decode(body.subarray(5, 5 + length)).caPem;
  } finally {
    session.close();
  }
}

const unavailable = (endpoint: Endpoint, reason: string) =>
  new PersysError("UNAVAILABLE", `cannot reach the control plane at ${endpoint.address} to fetch its CA: ${reason}`);

/** What {@link renewNodeCertificate} needs: where to call, and the node's current identity. */
export interface RenewOptions {
  readonly controlPlane: string;
  readonly nodeId: string;
  /** The current certificate, key and CA (what {@link joinCluster} wrote). */
  readonly files: JoinedFiles;
  readonly hosts?: readonly string[];
  readonly timeoutMs?: number;
}

/**
 * Asks the control plane for a fresh certificate of this node (RenewNodeCertificate), authenticated
 * by the current one over mTLS; call it before the current one expires (e.g. as a
 * `CertificateRotator`'s `issue`). Writes nothing: the caller swaps the material in.
 *
 * @throws PersysError UNAUTHENTICATED when the current certificate has expired (join again with a new
 * token), PERMISSION_DENIED when it is another node's, UNAVAILABLE when unreachable.
 */
export async function renewNodeCertificate(
  options: RenewOptions,
): Promise<{ certPem: string; keyPem: string; caPem: string; notAfter: Date }> {
  const endpoint = parseEndpoint(options.controlPlane, false);
  const [caPem, keyPem, certPem] = await Promise.all(
    [options.files.caPath, options.files.keyPath, options.files.certPath].map((p) => readFile(p)),
  );
  const creds = credentials.createSsl(caPem!, keyPem!, certPem!);
  const client = new api.SecurityServiceClient(endpoint.address, creds);
  const request = { nodeId: options.nodeId, csrPem: "", hosts: [...(options.hosts ?? [])] };
  const deadline = new Date(Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS));
  const response = await new Promise<api.RenewNodeCertificateResponse>((resolve, reject) => {
    client.renewNodeCertificate(request, new Metadata(), { deadline }, (error, answer) => {
      client.close();
      if (error) reject(persysErrorFromServiceError(error as ServiceError));
      else resolve(answer);
    });
  });
  return {
    certPem: response.certPem,
    keyPem: response.keyPem,
    caPem: response.caPem,
    notAfter: response.notAfter ?? new Date(new X509Certificate(response.certPem).validTo),
  };
}

function callJoinNode(
  address: string,
  caPem: string | undefined,
  timeoutMs: number,
  request: api.JoinNodeRequest,
): Promise<api.JoinNodeResponse> {
  const creds = caPem === undefined ? credentials.createInsecure() : credentials.createSsl(Buffer.from(caPem));
  const client = new api.SecurityServiceClient(address, creds);
  return new Promise<api.JoinNodeResponse>((resolve, reject) => {
    client.joinNode(request, new Metadata(), { deadline: new Date(Date.now() + timeoutMs) }, (error, response) => {
      client.close();
      if (error) reject(persysErrorFromServiceError(error as ServiceError));
      else resolve(response);
    });
  });
}

function issuedBy(certPem: string, caPem: string): boolean {
  try {
    return new X509Certificate(certPem).checkIssued(new X509Certificate(caPem));
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
}

/** Writes `text` to `path` through a temporary file and a rename (readers see the old or the new file). */
export async function writeAtomic(path: string, text: string, mode: number): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, text, { mode });
  await chmod(temp, mode);
  await rename(temp, path);
}
