/**
 * The identity convention of Persys certificates, read by authorisation: the subject's common name (CN)
 * is the principal's name and its organisation (O) is the role.
 *
 * | who | CN | O |
 * |---|---|---|
 * | a person or tool | its name (`alice`, `ci-bot@example.com`) | `admin`, `operator` or `viewer` |
 * | an agent | `node:<nodeId>` | `agent` |
 * | the control plane (server, and client of agents) | `control-plane` | `control-plane` |
 *
 * Exactly one CN and one O; anything else is no principal.
 */
import { X509Certificate as NodeX509Certificate } from "node:crypto";
import { x509 } from "./ec-keys.js";

/** Roles of people and tools, strongest first. */
export const USER_ROLES = ["admin", "operator", "viewer"] as const;
export type UserRole = (typeof USER_ROLES)[number];
export const AGENT_ROLE = "agent";
export const CONTROL_PLANE_ROLE = "control-plane";
export type PrincipalRole = UserRole | typeof AGENT_ROLE | typeof CONTROL_PLANE_ROLE;

/** The CN of control-plane certificates. */
export const CONTROL_PLANE_NAME = "control-plane";
/** Agents' CNs are this prefix and the node id. */
export const AGENT_NAME_PREFIX = "node:";

/** Who presented a certificate. `nodeId` is set for (and only for) agents. */
export interface Principal {
  readonly name: string;
  readonly role: PrincipalRole;
  readonly nodeId?: string;
}

const USER_NAME = /^[A-Za-z0-9._@-]{1,128}$/;
const NODE_ID = /^[A-Za-z0-9._-]{1,253}$/;

/** Whether `name` can be a user principal: 1–128 of `A-Z a-z 0-9 . _ @ -` (no `:`, so no `node:` clash). */
export function isValidUserName(name: string): boolean {
  return USER_NAME.test(name);
}

/** Whether `nodeId` can name an agent: 1–253 of `A-Z a-z 0-9 . _ -`. */
export function isValidNodeId(nodeId: string): boolean {
  return NODE_ID.test(nodeId);
}

export function isUserRole(role: string): role is UserRole {
  return (USER_ROLES as readonly string[]).includes(role);
}

/** The CN of the agent certificate for `nodeId`. */
export function agentCommonName(nodeId: string): string {
  return AGENT_NAME_PREFIX + nodeId;
}

/**
 * A certificate in any form at hand: PEM text, DER bytes, an `@peculiar/x509` certificate, anything with
 * the DER in `raw` (node:crypto `X509Certificate`, `tls.PeerCertificate`, grpc-js `sslPeerCertificate`),
 * or only the subject parts as `tls.PeerCertificate` gives them (a repeated attribute is an array).
 */
export type CertificateLike =
  | string
  | Uint8Array
  | x509.X509Certificate
  | { readonly raw: Uint8Array }
  | { readonly subject: Readonly<Record<string, string | readonly string[] | undefined>> };

function subjectValues(cert: CertificateLike): { cn: readonly string[]; o: readonly string[] } | undefined {
  if (cert instanceof x509.X509Certificate) {
    return { cn: cert.subjectName.getField("CN"), o: cert.subjectName.getField("O") };
  }
  if (typeof cert === "string" || cert instanceof Uint8Array) {
    const parsed = new x509.X509Certificate(typeof cert === "string" ? cert : new Uint8Array(cert));
    return subjectValues(parsed);
  }
  if (cert instanceof NodeX509Certificate || ("raw" in cert && cert.raw instanceof Uint8Array)) {
    return subjectValues(new Uint8Array(cert.raw));
  }
  if ("subject" in cert && typeof cert.subject === "object" && cert.subject !== null) {
    const list = (v: string | readonly string[] | undefined) =>
      v === undefined ? [] : typeof v === "string" ? [v] : v;
    return { cn: list(cert.subject.CN), o: list(cert.subject.O) };
  }
  return undefined;
}

/**
 * The subject's single CN and O, in the shape `auth/principal.ts` reads (`CallCredentials.certificate`),
 * or `undefined` when the certificate cannot be parsed or repeats either attribute (ambiguous: refuse).
 * An absent attribute is left out.
 */
export function certificateSubject(cert: CertificateLike): { commonName?: string; organization?: string } | undefined {
  let values: ReturnType<typeof subjectValues>;
  try {
    values = subjectValues(cert);
  } catch {
    return undefined;
  }
  if (!values || values.cn.length > 1 || values.o.length > 1) return undefined;
  return {
    ...(values.cn[0] !== undefined ? { commonName: values.cn[0] } : {}),
    ...(values.o[0] !== undefined ? { organization: values.o[0] } : {}),
  };
}

/**
 * The principal a certificate names, or `undefined` when it follows no convention above (no or several
 * CN/O, an unknown role, a malformed name) or cannot be parsed. It reads the subject only: the caller
 * must already have verified the certificate against the cluster CA (as a TLS server with `requestCert`
 * and `rejectUnauthorized` does) — a self-made certificate with `O=admin` is otherwise just as readable.
 */
export function principalFromCertificate(cert: CertificateLike): Principal | undefined {
  const subject = certificateSubject(cert);
  const name = subject?.commonName;
  const role = subject?.organization;
  if (name === undefined || role === undefined) return undefined;
  if (role === AGENT_ROLE) {
    if (!name.startsWith(AGENT_NAME_PREFIX)) return undefined;
    const nodeId = name.slice(AGENT_NAME_PREFIX.length);
    return isValidNodeId(nodeId) ? { name, role, nodeId } : undefined;
  }
  if (role === CONTROL_PLANE_ROLE) return name === CONTROL_PLANE_NAME ? { name, role } : undefined;
  if (isUserRole(role) && isValidUserName(name)) return { name, role };
  return undefined;
}
