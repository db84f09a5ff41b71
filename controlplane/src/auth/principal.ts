import {
  AGENT_NAME_PREFIX,
  AGENT_ROLE,
  type Principal as CertificatePrincipal,
  CONTROL_PLANE_ROLE,
  type PrincipalRole,
  principalFromCertificate,
  USER_ROLES,
  type UserRole,
} from "../pki/principal.js";

export { AGENT_NAME_PREFIX, USER_ROLES, type UserRole };

/**
 * Who is calling. Roles, from most to least powerful for people: `admin` (everything, including
 * security and the dangerous specs the cluster policy allows), `operator` (mutates workloads, nodes,
 * policies and secrets), `viewer` (reads). Machines: `agent` (registers and heartbeats as its own
 * node only) and `control-plane` (a control-plane server calling agents). Naming conventions of
 * certificates: pki/principal.ts.
 */
export type Role = PrincipalRole;

export const ROLES: readonly Role[] = [...USER_ROLES, AGENT_ROLE, CONTROL_PLANE_ROLE];

export interface Principal extends CertificatePrincipal {
  /** How the caller proved who they are. `development`: an unauthenticated call to an `--insecure` server. */
  readonly via: "certificate" | "token" | "development";
}

/** What a transport saw of the caller, before anything is checked against the cluster's records. */
export interface CallCredentials {
  /** Subject of a client certificate the TLS layer verified against the cluster CA. */
  readonly certificate?: { readonly commonName?: string; readonly organization?: string };
  /** The `authorization: Bearer <token>` value. */
  readonly bearerToken?: string;
}

export const isRole = (value: unknown): value is Role => typeof value === "string" && ROLES.includes(value as Role);

/**
 * The principal a verified client certificate's subject names (CN the name, O the role), or
 * `undefined` when it follows no Persys convention.
 */
export function principalFromSubject(subject: CallCredentials["certificate"]): Principal | undefined {
  if (!subject?.commonName || !subject.organization) return undefined;
  const found = principalFromCertificate({ subject: { CN: subject.commonName, O: subject.organization } });
  return found ? { ...found, via: "certificate" } : undefined;
}

/** Short text for messages and audit records, e.g. `alice (operator)`. */
export const describePrincipal = (p: Principal): string => `${p.name} (${p.role})`;
