/**
 * The cluster's PKI in embedded mode: its own CA, the identity convention authorisation reads, agent
 * join tokens, and certificate rotation (which Vault PKI can back as well).
 *
 * ```ts
 * import { CertificateRotator, ClusterCa, JoinTokenStore, principalFromCertificate } from "./pki/index.js";
 * const ca = await ClusterCa.loadOrCreate(join(dataDir, "pki"));          // ca.crt + ca.key (0600)
 * const server = await CertificateRotator.start({
 *   issue: () => ca.issueServer(["localhost", "127.0.0.1"]),
 *   files: { certPath: join(dataDir, "pki/server.crt"), keyPath: join(dataDir, "pki/server.key"), caPath: join(dataDir, "pki/ca.crt") },
 * });
 * const admin = await ca.issueUser("alice", "admin");                     // for a persysctl context
 * const { token } = await new JoinTokenStore(store).create({ ttlMs: 3_600_000, description: "rack 4" });
 * // on join: await tokens.consume(token, nodeId); then ca.issueAgent(nodeId)
 * principalFromCertificate(socket.getPeerCertificate()); // { name: "alice", role: "admin" }
 * ```
 */
export {
  type CertificateFiles,
  type CertificateMaterial,
  CertificateRotator,
  type CertificateRotatorOptions,
  type CurrentCertificate,
  type RotationClock,
  realClock,
  renewalTime,
  writeCertificateFiles,
} from "./certificate-rotation.js";
export {
  CA_CERT_FILE,
  CA_KEY_FILE,
  type CertificateUsage,
  CLOCK_SKEW_MS,
  ClusterCa,
  type ClusterCaOptions,
  DEFAULT_CA_VALIDITY_MS,
  DEFAULT_LEAF_VALIDITY,
  type IssuedCertificate,
  type IssueRequest,
  type LeafOptions,
  type LeafValidity,
} from "./cluster-ca.js";
export {
  type ConsumedJoinToken,
  type CreatedJoinToken,
  DEFAULT_JOIN_TOKEN_TTL_MS,
  JoinTokenError,
  type JoinTokenFailure,
  type JoinTokenInfo,
  JoinTokenStore,
  type JoinTokenStoreOptions,
  MAX_JOIN_TOKEN_TTL_MS,
} from "./join-tokens.js";
export { PkiError, type PkiErrorReason } from "./pki-error.js";
export {
  AGENT_NAME_PREFIX,
  AGENT_ROLE,
  agentCommonName,
  type CertificateLike,
  CONTROL_PLANE_NAME,
  CONTROL_PLANE_ROLE,
  certificateSubject,
  isUserRole,
  isValidNodeId,
  isValidUserName,
  type Principal,
  type PrincipalRole,
  principalFromCertificate,
  USER_ROLES,
  type UserRole,
} from "./principal.js";
export { CERT_FILE_MODE, KEY_DIR_MODE, KEY_FILE_MODE, writeFileAtomic } from "./private-file.js";
