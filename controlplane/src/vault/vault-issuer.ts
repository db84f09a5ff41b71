import { isIP } from "node:net";
import type { CertificateIssuer } from "../pki/certificate-issuer.js";
import type { IssuedCertificate, LeafOptions } from "../pki/cluster-ca.js";
import {
  AGENT_ROLE,
  agentCommonName,
  CONTROL_PLANE_NAME,
  CONTROL_PLANE_ROLE,
  type UserRole,
} from "../pki/principal.js";
import type { VaultClient } from "./vault-client.js";

/**
 * Certificates from Vault PKI (`<pki mount>/issue/<role>`). Vault roles fix the subject's organization,
 * so there is one role per Persys role, named `<rolePrefix><role>`: `persys-control-plane`,
 * `persys-agent`, `persys-admin`, `persys-operator`, `persys-viewer` by default, each with
 * `organization=<role>` and `allow_any_name` (or names matching CN conventions). See docs/security.md.
 */
export class VaultIssuer implements CertificateIssuer {
  /** The CA learnt from issuing (Vault returns its issuing CA with each certificate); empty before. */
  private ca = "";

  constructor(
    private readonly vault: Pick<VaultClient, "issueCertificate">,
    private readonly rolePrefix: string,
  ) {}

  /** The CA learnt from the first issued certificate (Vault returns its issuing CA with each). */
  get certPem(): string {
    return this.ca;
  }

  private async issue(
    role: string,
    commonName: string,
    hosts: readonly string[],
    options: LeafOptions,
  ): Promise<IssuedCertificate> {
    const issued = await this.vault.issueCertificate(`${this.rolePrefix}${role}`, {
      commonName,
      altNames: hosts.filter((h) => isIP(h) === 0),
      ipSans: hosts.filter((h) => isIP(h) !== 0),
      ...(options.validityMs ? { ttl: `${Math.ceil(options.validityMs / 1000)}s` } : {}),
    });
    this.ca = issued.caPem;
    return issued;
  }

  issueServer(hosts: readonly string[], options: LeafOptions = {}): Promise<IssuedCertificate> {
    return this.issue(CONTROL_PLANE_ROLE, CONTROL_PLANE_NAME, hosts, options);
  }

  issueAgent(nodeId: string, options: LeafOptions & { hosts?: readonly string[] } = {}): Promise<IssuedCertificate> {
    return this.issue(AGENT_ROLE, agentCommonName(nodeId), options.hosts ?? [], options);
  }

  issueUser(name: string, role: UserRole, options: LeafOptions = {}): Promise<IssuedCertificate> {
    return this.issue(role, name, [], options);
  }
}
