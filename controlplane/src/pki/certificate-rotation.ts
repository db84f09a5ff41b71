/**
 * Keeps one identity's certificate fresh: re-issues it when less than a fraction of its lifetime
 * remains, writes the files atomically and tells listeners, so TLS servers swap it in without dropping
 * connections (`tls.Server#setSecureContext`, a grpc-js certificate provider).
 *
 * ```ts
 * const rotator = await CertificateRotator.start({
 *   issue: () => ca.issueServer(["localhost", "127.0.0.1"]),   // or a Vault PKI role
 *   files: { certPath: "pki/server.crt", keyPath: "pki/server.key", caPath: "pki/ca.crt" },
 * });
 * const server = https.createServer({ cert: rotator.current.certPem, key: rotator.current.keyPem, ... });
 * rotator.onRotate(({ certPem, keyPem, caPem }) => server.setSecureContext({ cert: certPem, key: keyPem, ca: caPem }));
 * ```
 */
import { createPrivateKey, X509Certificate as NodeX509Certificate } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { CERT_FILE_MODE, KEY_FILE_MODE, writeFileAtomic } from "./private-file.js";

/** A certificate with its key and the CA that peers verify it with, all PEM. */
export interface CertificateMaterial {
  readonly certPem: string;
  readonly keyPem: string;
  readonly caPem: string;
}

/** {@link CertificateMaterial} with the validity read from the certificate. */
export interface CurrentCertificate extends CertificateMaterial {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** Where the rotator keeps the identity's files. */
export interface CertificateFiles {
  readonly certPath: string;
  /** Written with mode 0600. */
  readonly keyPath: string;
  /** The CA (chain) PEM peers are verified with. */
  readonly caPath: string;
}

/** Time for the rotator; the default is the real clock and timers. Tests pass a manual one. */
export interface RotationClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: RotationClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface CertificateRotatorOptions {
  /** Makes a new certificate and key (the cluster CA's `issue*` or Vault PKI). */
  readonly issue: () => Promise<CertificateMaterial>;
  /** Files to keep up to date (and to start from when they hold a valid pair). */
  readonly files?: CertificateFiles;
  /**
   * The CA the issuer signs with now. A certificate in `files` that another CA issued (the CA was
   * re-created, or moved to Vault) is not started from but re-issued.
   */
  readonly caPem?: string;
  /** Re-issue when less than this fraction of the lifetime remains; default 1/3. In (0, 1). */
  readonly renewBefore?: number;
  /** First delay after a failed re-issue, doubled up to `maxRetryDelayMs`; default 1 s. */
  readonly retryDelayMs?: number;
  /** Default 5 minutes. */
  readonly maxRetryDelayMs?: number;
  /** Called for each failed re-issue or listener; the current certificate stays in use. */
  readonly onError?: (error: unknown) => void;
  readonly clock?: RotationClock;
}

/** setTimeout's longest delay; longer waits are done in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Whether the first certificate of `caPem` (the issuer: Vault's issuing_ca, the cluster CA) signed `certPem`. */
function issuedBy(certPem: string, caPem: string): boolean {
  try {
    const cert = new NodeX509Certificate(certPem);
    const issuer = new NodeX509Certificate(caPem);
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** Reads the validity; throws when the key is not the certificate's or the CA did not issue it. */
function parse(material: CertificateMaterial): CurrentCertificate {
  const cert = new NodeX509Certificate(material.certPem);
  if (!cert.checkPrivateKey(createPrivateKey(material.keyPem))) {
    throw new Error("the private key does not belong to the certificate");
  }
  if (!issuedBy(material.certPem, material.caPem))
    throw new Error("the certificate was not issued by the CA given with it");
  const { certPem, keyPem, caPem } = material;
  return { certPem, keyPem, caPem, notBefore: new Date(cert.validFrom), notAfter: new Date(cert.validTo) };
}

/**
 * Holds the current certificate of one identity and rotates it on a timer. Create with
 * {@link CertificateRotator.start}; {@link CertificateRotator.stop} when done.
 *
 * Failure: a failed re-issue is reported to `onError` and retried with backoff while the current
 * certificate keeps being served (it may expire if the issuer stays down). A listener that throws is
 * reported and does not stop the others.
 */
export class CertificateRotator {
  private material: CurrentCertificate;
  private readonly listeners = new Set<(material: CertificateMaterial) => void | Promise<void>>();
  private readonly clock: RotationClock;
  private readonly renewBefore: number;
  private timer: unknown;
  private retryDelayMs: number;
  private stopped = false;
  private rotating: Promise<CurrentCertificate> | undefined;

  private constructor(
    private readonly options: CertificateRotatorOptions,
    material: CurrentCertificate,
  ) {
    this.material = material;
    this.clock = options.clock ?? realClock;
    this.renewBefore = options.renewBefore ?? 1 / 3;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
  }

  /**
   * Starts from the certificate in `files` when they hold a matching pair whose key file is 0600 and
   * which is not yet due; otherwise issues one (and writes the files). Resolves once a certificate is
   * current; rejects when issuing the first one fails.
   */
  static async start(options: CertificateRotatorOptions): Promise<CertificateRotator> {
    const renewBefore = options.renewBefore ?? 1 / 3;
    if (!(renewBefore > 0 && renewBefore < 1)) throw new RangeError("renewBefore must be between 0 and 1");
    const clock = options.clock ?? realClock;
    let material = options.files ? await readFiles(options.files) : undefined;
    if (material && options.caPem !== undefined && !issuedBy(material.certPem, options.caPem)) material = undefined;
    if (!material || clock.now() >= renewalTime(material, renewBefore)) {
      material = parse(await options.issue());
      if (options.files) await writeCertificateFiles(options.files, material);
    }
    const rotator = new CertificateRotator(options, material);
    rotator.schedule(renewalTime(material, renewBefore) - clock.now());
    return rotator;
  }

  /** The certificate in use now. */
  get current(): CurrentCertificate {
    return this.material;
  }

  /** When the current certificate is due for re-issuing. */
  get renewsAt(): Date {
    return new Date(renewalTime(this.material, this.renewBefore));
  }

  /** Calls `listener` after every rotation (after the files are written). Returns an unsubscribe. */
  onRotate(listener: (material: CertificateMaterial) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Re-issues now (e.g. after the CA changed), writes the files and tells the listeners. Concurrent calls
   * share one re-issue. Rejects when issuing fails (the current certificate stays).
   */
  rotateNow(): Promise<CurrentCertificate> {
    this.rotating ??= this.rotate().finally(() => {
      this.rotating = undefined;
    });
    return this.rotating;
  }

  /** Stops the timer; the current certificate stays readable. Idempotent. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async rotate(): Promise<CurrentCertificate> {
    const next = parse(await this.options.issue());
    if (this.options.files) await writeCertificateFiles(this.options.files, next);
    this.material = next;
    for (const listener of this.listeners) {
      try {
        await listener({ certPem: next.certPem, keyPem: next.keyPem, caPem: next.caPem });
      } catch (error) {
        this.options.onError?.(error);
      }
    }
    return next;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const wait = Math.max(0, Math.min(delayMs, MAX_TIMER_MS));
    this.timer = this.clock.setTimeout(() => void this.tick(), wait);
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    const due = renewalTime(this.material, this.renewBefore);
    if (this.clock.now() < due) {
      this.schedule(due - this.clock.now()); // a long wait done in steps
      return;
    }
    try {
      await this.rotateNow();
      this.retryDelayMs = this.options.retryDelayMs ?? 1000;
      this.schedule(renewalTime(this.material, this.renewBefore) - this.clock.now());
    } catch (error) {
      this.options.onError?.(error);
      const delay = this.retryDelayMs;
      this.retryDelayMs = Math.min(delay * 2, this.options.maxRetryDelayMs ?? 5 * 60 * 1000);
      this.schedule(delay);
    }
  }
}

/** The time at which less than `fraction` of the certificate's lifetime remains. */
export function renewalTime(cert: { notBefore: Date; notAfter: Date }, fraction: number): number {
  const start = cert.notBefore.getTime();
  const end = cert.notAfter.getTime();
  return end - fraction * (end - start);
}

/**
 * Writes the key (0600), then the certificate and CA (0644), each atomically (a reader sees a whole old
 * or new file, but may briefly see a new key beside the old certificate: prefer `onRotate` to watching).
 */
export async function writeCertificateFiles(files: CertificateFiles, material: CertificateMaterial): Promise<void> {
  await writeFileAtomic(files.keyPath, material.keyPem, KEY_FILE_MODE);
  await writeFileAtomic(files.certPath, material.certPem, CERT_FILE_MODE);
  await writeFileAtomic(files.caPath, material.caPem, CERT_FILE_MODE);
}

/**
 * The certificate in the files, or `undefined` when one is missing or unreadable, the key is not the
 * certificate's or is not 0600, or the CA file did not issue it (the CA changed).
 */
async function readFiles(files: CertificateFiles): Promise<CurrentCertificate | undefined> {
  try {
    if (((await stat(files.keyPath)).mode & 0o077) !== 0) return undefined;
    const [certPem, keyPem, caPem] = await Promise.all([
      readFile(files.certPath, "utf8"),
      readFile(files.keyPath, "utf8"),
      readFile(files.caPath, "utf8"),
    ]);
    return parse({ certPem, keyPem, caPem });
  } catch {
    return undefined;
  }
}
