import type { IssuedCertificate, LeafOptions } from "./cluster-ca.js";
import type { UserRole } from "./principal.js";

/**
 * Who signs the cluster's certificates: the cluster CA in the data dir (`ClusterCa`) or Vault PKI
 * (`VaultIssuer`). Both follow the naming conventions of principal.ts (CN the name, O the role).
 */
export interface CertificateIssuer {
  /** The CA certificate (chain) that peers trust, PEM. */
  readonly certPem: string;
  /** The control plane's certificate (CN and O `control-plane`) for `hosts`, usable as server and client. */
  issueServer(hosts: readonly string[], options?: LeafOptions): Promise<IssuedCertificate>;
  /** The certificate of the agent on `nodeId` (CN `node:<id>`, O `agent`). */
  issueAgent(nodeId: string, options?: LeafOptions & { hosts?: readonly string[] }): Promise<IssuedCertificate>;
  /** A person's or tool's client certificate. */
  issueUser(name: string, role: UserRole, options?: LeafOptions): Promise<IssuedCertificate>;
}
