import { type ChannelCredentials, experimental, type ServerCredentials } from "@grpc/grpc-js";

/** A certificate, its private key and the CA that peers are checked against, all PEM. */
export interface TlsMaterial {
  readonly certPem: string;
  readonly keyPem: string;
  readonly caPem: string;
}

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/**
 * The current TLS material of a process, swappable at run time: gRPC servers and channels built on it
 * (see {@link reloadableServerCredentials}, {@link reloadableChannelCredentials}) pick up a rotated
 * certificate for new connections while open connections carry on, so rotation drops nothing.
 */
export class ReloadableCertificates implements experimental.CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  private listeners = new Set<(material: TlsMaterial) => void>();

  constructor(private material: TlsMaterial) {}

  get current(): TlsMaterial {
    return this.material;
  }

  /** Replaces the material; every server, channel and listener built on this sees it from now on. */
  update(material: TlsMaterial): void {
    this.material = material;
    for (const l of this.caListeners) l({ caCertificate: Buffer.from(material.caPem) });
    for (const l of this.identityListeners)
      l({ certificate: Buffer.from(material.certPem), privateKey: Buffer.from(material.keyPem) });
    for (const l of this.listeners) l(material);
  }

  /** Calls `listener` on every update (e.g. to `setSecureContext` an HTTPS server). Returns the unsubscribe. */
  onUpdate(listener: (material: TlsMaterial) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // grpc-js registers its watcher only after adding these listeners: deliver the current material
  // on the next tick, as its own file-watching provider does, or the first update is lost.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    setImmediate(() => {
      if (this.caListeners.has(listener)) listener({ caCertificate: Buffer.from(this.material.caPem) });
    });
  }
  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }
  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    setImmediate(() => {
      if (this.identityListeners.has(listener))
        listener({ certificate: Buffer.from(this.material.certPem), privateKey: Buffer.from(this.material.keyPem) });
    });
  }
  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }
}

/**
 * gRPC server credentials over `source`: TLS with its certificate; client certificates are asked
 * for and verified against its CA but not required (callers may present a bearer token instead).
 * Only verified certificates show in a call's auth context.
 */
export function reloadableServerCredentials(source: ReloadableCertificates): ServerCredentials {
  // One object provides both: grpc-js's exported helper swaps its two provider parameters.
  return experimental.createCertificateProviderServerCredentials(source, source, false);
}

/** gRPC channel credentials over `source`: verifies the server against its CA and presents its certificate. */
export function reloadableChannelCredentials(source: ReloadableCertificates): ChannelCredentials {
  return experimental.createCertificateProviderChannelCredentials(source, source);
}
