/**
 * The cluster's own certificate authority (embedded mode): an ECDSA P-256 CA kept as `ca.crt` + `ca.key`
 * in a folder of the data dir, created on first start, issuing server, agent and user certificates.
 */
import { createPrivateKey, X509Certificate as NodeX509Certificate, randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import { type FieldViolation, invalid } from "@persys/schema";
import { type CryptoKey, EC_ALGORITHM, generateKeyPair, importSigningKey, privateKeyToPem, x509 } from "./ec-keys.js";
import { PkiError } from "./pki-error.js";
import {
  AGENT_ROLE,
  agentCommonName,
  CONTROL_PLANE_NAME,
  CONTROL_PLANE_ROLE,
  isUserRole,
  isValidNodeId,
  isValidUserName,
  type UserRole,
} from "./principal.js";
import {
  assertPrivateKeyFile,
  CERT_FILE_MODE,
  createFileExclusive,
  exists,
  KEY_DIR_MODE,
  KEY_FILE_MODE,
  restrictDirectory,
} from "./private-file.js";

export const CA_CERT_FILE = "ca.crt";
export const CA_KEY_FILE = "ca.key";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Lifetime of a new cluster CA: 10 years. */
export const DEFAULT_CA_VALIDITY_MS = 3652 * DAY_MS;
/** Default leaf lifetimes: servers and agents rotate monthly, people yearly. */
export const DEFAULT_LEAF_VALIDITY: LeafValidity = {
  serverMs: 30 * DAY_MS,
  agentMs: 30 * DAY_MS,
  userMs: 365 * DAY_MS,
};
/** Leaf certificates start this long before issuance, so a peer whose clock is a little behind accepts them. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** What a certificate may be used for: TLS server (serverAuth), TLS client (clientAuth) or both. */
export type CertificateUsage = "server" | "client" | "both";

export interface IssueRequest {
  /** Subject CN: the principal's name (see `principal.ts`). */
  readonly commonName: string;
  /** Subject O: the role. */
  readonly organization?: string;
  /** DNS subjectAltNames (a leading `*.` wildcard is allowed). */
  readonly dnsNames?: readonly string[];
  /** IP subjectAltNames, v4 or v6. */
  readonly ipAddresses?: readonly string[];
  readonly usage: CertificateUsage;
  /**
   * Lifetime in ms: `notAfter = (notBefore ?? now) + validityMs`, cut to the CA's own end.
   */
  readonly validityMs: number;
  /**
   * Start of validity. Default: now minus {@link CLOCK_SKEW_MS} (the lifetime still counts from now), so a
   * peer whose clock is a little behind accepts it. A window in the past makes an expired certificate.
   */
  readonly notBefore?: Date;
}

/** A freshly issued certificate with its new private key (PKCS#8 PEM) and the issuing CA's certificate. */
export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  /** The issuing CA (or chain), PEM: what peers must trust. */
  readonly caPem: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Serial number, lowercase hex. */
  readonly serial: string;
}

/** Default lifetimes of the certificates `issueServer`, `issueAgent` and `issueUser` make. */
export interface LeafValidity {
  readonly serverMs: number;
  readonly agentMs: number;
  readonly userMs: number;
}

export interface ClusterCaOptions {
  /** CN of a new CA; default `Persys cluster CA <random>` (unique, so two clusters' CAs are told apart). */
  readonly commonName?: string;
  /** Lifetime of a new CA; default 10 years. */
  readonly caValidityMs?: number;
  readonly leafValidity?: Partial<LeafValidity>;
  /** The clock (ms since the epoch); default `Date.now`. */
  readonly now?: () => number;
}

/** Options of the `issueServer`/`issueAgent`/`issueUser` shorthands. */
export interface LeafOptions {
  readonly validityMs?: number;
  readonly notBefore?: Date;
}

const DNS_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const DNS_NAME = new RegExp(`^(\\*\\.)?${DNS_LABEL}(\\.${DNS_LABEL})*$`);

function randomSerial(): string {
  const bytes = randomBytes(16);
  // Positive, and with a non-zero first byte so the DER integer is exactly 16 bytes.
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString("hex");
}

function checkRequest(request: IssueRequest): void {
  const details: FieldViolation[] = [];
  if (typeof request.commonName !== "string" || request.commonName.trim() === "" || request.commonName.length > 300) {
    details.push({ path: "commonName", reason: "must be a non-empty string of at most 300 characters" });
  }
  if (request.organization !== undefined && (request.organization === "" || request.organization.length > 64)) {
    details.push({ path: "organization", reason: "must be 1-64 characters" });
  }
  (request.dnsNames ?? []).forEach((name, i) => {
    if (name.length > 253 || !DNS_NAME.test(name)) details.push({ path: `dnsNames[${i}]`, reason: "not a DNS name" });
  });
  (request.ipAddresses ?? []).forEach((ip, i) => {
    if (isIP(ip) === 0) details.push({ path: `ipAddresses[${i}]`, reason: "not an IPv4 or IPv6 address" });
  });
  if (!["server", "client", "both"].includes(request.usage)) {
    details.push({ path: "usage", reason: 'must be "server", "client" or "both"' });
  }
  if (!Number.isSafeInteger(request.validityMs) || request.validityMs <= 0) {
    details.push({ path: "validityMs", reason: "must be a positive integer" });
  }
  if (request.notBefore !== undefined && Number.isNaN(request.notBefore.getTime())) {
    details.push({ path: "notBefore", reason: "is not a valid date" });
  }
  if (request.usage !== "client" && !request.dnsNames?.length && !request.ipAddresses?.length) {
    details.push({ path: "dnsNames", reason: "a server certificate needs at least one DNS name or IP address" });
  }
  if (details.length > 0) throw invalid("INVALID_ARGUMENT", details, "certificate request");
}

/** Splits host names and addresses for a SAN list. */
function splitHosts(hosts: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  return {
    dnsNames: hosts.filter((h) => isIP(h) === 0),
    ipAddresses: hosts.filter((h) => isIP(h) !== 0),
  };
}

/**
 * A certificate authority backed by a P-256 key held in memory. Create or load one with
 * {@link ClusterCa.loadOrCreate}; {@link ClusterCa.generate} makes a throwaway one (tests).
 *
 * Issuing is local and stateless: every call makes a new key pair and a random 128-bit serial; nothing
 * is recorded (no revocation list: certificates are short-lived and rotated instead).
 */
export class ClusterCa {
  /** The CA certificate, PEM: the trust anchor servers, agents and clients are given. */
  readonly certPem: string;
  readonly certificate: x509.X509Certificate;
  /** Whether `loadOrCreate` made this CA now (first start) rather than loading it. */
  readonly created: boolean;
  readonly leafValidity: LeafValidity;
  private readonly signingKey: CryptoKey;
  private readonly now: () => number;

  private constructor(cert: x509.X509Certificate, signingKey: CryptoKey, created: boolean, options: ClusterCaOptions) {
    this.certificate = cert;
    this.certPem = cert.toString("pem");
    this.signingKey = signingKey;
    this.created = created;
    this.now = options.now ?? Date.now;
    this.leafValidity = { ...DEFAULT_LEAF_VALIDITY, ...options.leafValidity };
  }

  /** When the CA itself expires; every leaf is cut to end no later. */
  get notAfter(): Date {
    return this.certificate.notAfter;
  }

  /**
   * Loads the CA from `dir/ca.crt` and `dir/ca.key`, or, when neither exists, creates it (folder mode
   * 0700, key 0600, certificate 0644). Never overwrites: of two processes creating at once, one wins and
   * the other loads its files.
   *
   * Refuses with a {@link PkiError} (INVALID_CONFIG, nothing changed): `incomplete` when only one file
   * exists, `key-permissions` when the key is readable by group or others, `unreadable`, `not-a-ca`,
   * `unsupported-key`, or `key-mismatch` when the key is not the certificate's.
   */
  static async loadOrCreate(dir: string, options: ClusterCaOptions = {}): Promise<ClusterCa> {
    const certPath = join(dir, CA_CERT_FILE);
    const keyPath = join(dir, CA_KEY_FILE);
    const [hasCert, hasKey] = await Promise.all([exists(certPath), exists(keyPath)]);
    if (!hasCert && !hasKey) {
      const created = await ClusterCa.createIn(dir, options);
      if (created) return created;
    } else if (hasCert !== hasKey) {
      const [present, missing] = hasCert ? [certPath, keyPath] : [keyPath, certPath];
      throw new PkiError(
        "incomplete",
        missing,
        `${missing} is missing but ${present} exists: restore it, or remove ${present} to create a new CA ` +
          "(every certificate it issued then stops being trusted)",
      );
    }
    await assertPrivateKeyFile(keyPath);
    const [certPem, keyPem] = await Promise.all([readFile(certPath, "utf8"), readFile(keyPath, "utf8")]);
    return ClusterCa.fromPem(certPem, keyPem, options, { certPath, keyPath });
  }

  /**
   * A CA from PEM text (e.g. held elsewhere than files). Checks it as `loadOrCreate` does; the error's
   * `path` is `certPath`/`keyPath` when given, else `"ca.crt"`/`"ca.key"`.
   */
  static async fromPem(
    certPem: string,
    keyPem: string,
    options: ClusterCaOptions = {},
    paths: { certPath?: string; keyPath?: string } = {},
  ): Promise<ClusterCa> {
    const certPath = paths.certPath ?? CA_CERT_FILE;
    const keyPath = paths.keyPath ?? CA_KEY_FILE;
    let cert: x509.X509Certificate;
    let nodeCert: NodeX509Certificate;
    try {
      cert = new x509.X509Certificate(certPem);
      nodeCert = new NodeX509Certificate(certPem);
    } catch (cause) {
      throw new PkiError("unreadable", certPath, `${certPath} is not a PEM certificate`, { cause });
    }
    const constraints = cert.getExtension(x509.BasicConstraintsExtension);
    if (!constraints?.ca || !nodeCert.checkIssued(nodeCert)) {
      throw new PkiError("not-a-ca", certPath, `${certPath} is not a self-signed CA certificate (CA:true)`);
    }
    let privateKey: ReturnType<typeof createPrivateKey>;
    try {
      privateKey = createPrivateKey(keyPem);
    } catch (cause) {
      throw new PkiError("unreadable", keyPath, `${keyPath} is not a PEM private key`, { cause });
    }
    let signingKey: CryptoKey;
    try {
      signingKey = await importSigningKey(keyPem);
    } catch (cause) {
      throw new PkiError("unsupported-key", keyPath, `${keyPath}: ${(cause as Error).message}`, { cause });
    }
    if (!nodeCert.checkPrivateKey(privateKey)) {
      throw new PkiError("key-mismatch", keyPath, `${keyPath} is not the private key of ${certPath}`);
    }
    return new ClusterCa(cert, signingKey, false, options);
  }

  /** A new CA held in memory only (nothing is written). */
  static async generate(options: ClusterCaOptions = {}): Promise<{ ca: ClusterCa; keyPem: string }> {
    const now = options.now ?? Date.now;
    const keys = await generateKeyPair();
    const name = options.commonName ?? `Persys cluster CA ${randomBytes(4).toString("hex")}`;
    const notBefore = new Date(now() - CLOCK_SKEW_MS);
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: [{ CN: [name] }, { O: ["persys"] }],
      notBefore,
      notAfter: new Date(now() + (options.caValidityMs ?? DEFAULT_CA_VALIDITY_MS)),
      keys,
      signingAlgorithm: EC_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return { ca: new ClusterCa(cert, keys.privateKey, true, options), keyPem: await privateKeyToPem(keys.privateKey) };
  }

  /** Creates the CA files; `undefined` when another process created them first. */
  private static async createIn(dir: string, options: ClusterCaOptions): Promise<ClusterCa | undefined> {
    const dirExisted = await exists(dir);
    await mkdir(dir, { recursive: true, mode: KEY_DIR_MODE });
    if (!dirExisted) await restrictDirectory(dir);
    const { ca, keyPem } = await ClusterCa.generate(options);
    if (!(await createFileExclusive(join(dir, CA_KEY_FILE), keyPem, KEY_FILE_MODE))) return undefined;
    if (!(await createFileExclusive(join(dir, CA_CERT_FILE), ca.certPem, CERT_FILE_MODE))) return undefined;
    return ca;
  }

  /**
   * Issues a leaf certificate with a new P-256 key: basicConstraints CA:false (critical), keyUsage
   * digitalSignature (critical), extKeyUsage serverAuth and/or clientAuth, the SANs, and subject and
   * authority key ids. A request that is not valid: INVALID_ARGUMENT naming each bad field.
   */
  async issue(request: IssueRequest): Promise<IssuedCertificate> {
    checkRequest(request);
    const keys = await generateKeyPair();
    const now = this.now();
    const notBefore = request.notBefore ?? new Date(now - CLOCK_SKEW_MS);
    const start = request.notBefore?.getTime() ?? now;
    const notAfter = new Date(Math.min(start + request.validityMs, this.notAfter.getTime()));
    const usages: string[] = [];
    if (request.usage !== "client") usages.push(x509.ExtendedKeyUsage.serverAuth);
    if (request.usage !== "server") usages.push(x509.ExtendedKeyUsage.clientAuth);
    const sans: x509.JsonGeneralName[] = [
      ...(request.dnsNames ?? []).map((value) => ({ type: "dns" as const, value })),
      ...(request.ipAddresses ?? []).map((value) => ({ type: "ip" as const, value })),
    ];
    const subject: x509.JsonName = [{ CN: [request.commonName] }];
    if (request.organization !== undefined) subject.push({ O: [request.organization] });
    const caKeyId = this.certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(usages, false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      caKeyId
        ? new x509.AuthorityKeyIdentifierExtension(caKeyId)
        : await x509.AuthorityKeyIdentifierExtension.create(this.certificate.publicKey),
    ];
    if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans, false));
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject,
      issuer: this.certificate.subjectName,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: this.signingKey,
      signingAlgorithm: EC_ALGORITHM,
      extensions,
    });
    return {
      certPem: cert.toString("pem"),
      keyPem: await privateKeyToPem(keys.privateKey),
      caPem: this.certPem,
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
      serial: cert.serialNumber.toLowerCase(),
    };
  }

  /**
   * A client certificate for a person or tool: CN `name`, O `role`; default lifetime `leafValidity.userMs`.
   * A name outside the convention or an unknown role: INVALID_ARGUMENT.
   */
  async issueUser(name: string, role: UserRole, options: LeafOptions = {}): Promise<IssuedCertificate> {
    const details: FieldViolation[] = [];
    if (!isValidUserName(name)) details.push({ path: "name", reason: "must be 1-128 of A-Z a-z 0-9 . _ @ -" });
    if (!isUserRole(role)) details.push({ path: "role", reason: "must be admin, operator or viewer" });
    if (details.length > 0) throw invalid("INVALID_ARGUMENT", details, "user certificate request");
    return this.issue({
      commonName: name,
      organization: role,
      usage: "client",
      validityMs: options.validityMs ?? this.leafValidity.userMs,
      ...(options.notBefore ? { notBefore: options.notBefore } : {}),
    });
  }

  /**
   * The certificate of the agent on `nodeId`: CN `node:<nodeId>`, O `agent`, usable as client (to the
   * control plane) and as server (the agent's own gRPC endpoint, when `hosts` names its addresses).
   */
  async issueAgent(
    nodeId: string,
    options: LeafOptions & { hosts?: readonly string[] } = {},
  ): Promise<IssuedCertificate> {
    if (!isValidNodeId(nodeId)) {
      throw invalid("INVALID_ARGUMENT", [{ path: "nodeId", reason: "must be 1-253 of A-Z a-z 0-9 . _ -" }]);
    }
    const hosts = splitHosts(options.hosts ?? []);
    return this.issue({
      commonName: agentCommonName(nodeId),
      organization: AGENT_ROLE,
      ...hosts,
      usage: hosts.dnsNames.length + hosts.ipAddresses.length > 0 ? "both" : "client",
      validityMs: options.validityMs ?? this.leafValidity.agentMs,
      ...(options.notBefore ? { notBefore: options.notBefore } : {}),
    });
  }

  /**
   * The control plane's certificate: CN and O `control-plane`, SANs from `hosts` (names and addresses the
   * API is reached at, e.g. `localhost`, `127.0.0.1`), usable as server and as client (the control plane
   * dials agents with it).
   */
  async issueServer(hosts: readonly string[], options: LeafOptions = {}): Promise<IssuedCertificate> {
    return this.issue({
      commonName: CONTROL_PLANE_NAME,
      organization: CONTROL_PLANE_ROLE,
      ...splitHosts(hosts),
      usage: "both",
      validityMs: options.validityMs ?? this.leafValidity.serverMs,
      ...(options.notBefore ? { notBefore: options.notBefore } : {}),
    });
  }
}
