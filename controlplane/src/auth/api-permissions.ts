import type { AgentControlApi, PersysApi } from "../api/persys-api.js";
import type { Role } from "./principal.js";

/**
 * What a method needs:
 * - `read`: viewer, operator or admin;
 * - `write`: operator or admin (mutates workloads, nodes, policies, secrets);
 * - `admin`: admin only (tokens, certificates, join tokens);
 * - `agent`: an agent acting for the node the request names (`nodeId`), or an admin;
 * - `public`: no identity needed (the request carries its own proof, e.g. a join token).
 */
export type Permission = "read" | "write" | "admin" | "agent" | "public";

export interface MethodRule {
  readonly permission: Permission;
  /** The method returns an async iterable (server stream). */
  readonly stream?: boolean;
  /** Record an audit event for every call, whatever the result (mutations). */
  readonly audit?: boolean;
}

const read: MethodRule = { permission: "read" };
const readStream: MethodRule = { permission: "read", stream: true };
const write: MethodRule = { permission: "write", audit: true };
const admin: MethodRule = { permission: "admin", audit: true };

/** Every public API method's rule; the compiler insists that a new method is classified here. */
export const PERSYS_API_RULES: Readonly<Record<keyof PersysApi, MethodRule>> = {
  applyWorkload: write,
  applyWorkloads: write,
  getWorkload: read,
  listWorkloads: read,
  deleteWorkload: write,
  startWorkload: write,
  stopWorkload: write,
  restartWorkload: write,
  retryWorkload: write,
  moveReplica: write,
  explainWorkload: read,
  planWorkload: read,
  streamWorkloadLogs: readStream,
  watchWorkloads: readStream,
  listNodes: read,
  getNode: read,
  cordonNode: write,
  uncordonNode: write,
  drainNode: write,
  getClusterSummary: read,
  listEvents: read,
  watchEvents: readStream,
  diagnoseWorkload: read,
  getForecast: read,
  listRecommendations: read,
  ask: read,
  applyPolicy: write,
  listPolicies: read,
  deletePolicy: write,
  listAuditRecords: read,
  approveAction: write,
  putSecret: write,
  getSecret: read,
  listSecrets: read,
  deleteSecret: write,
  whoAmI: read,
  createApiToken: admin,
  listApiTokens: { permission: "admin" },
  revokeApiToken: admin,
  createJoinToken: admin,
  listJoinTokens: { permission: "admin" },
  revokeJoinToken: admin,
  getClusterCa: { permission: "public" },
  joinNode: { permission: "public", audit: true },
  renewNodeCertificate: { permission: "agent", audit: true },
  issueUserCertificate: admin,
};

/** The Go-compatible AgentControl service: agents report for themselves; the Go CLI/gateway drive workloads. */
export const AGENT_CONTROL_RULES: Readonly<Record<keyof AgentControlApi, MethodRule>> = {
  registerNode: { permission: "agent", audit: true },
  heartbeat: { permission: "agent" },
  applyWorkload: write,
  deleteWorkload: write,
  retryWorkload: write,
  submitAutomationSuggestion: write,
  listNodes: read,
  getNode: read,
  listWorkloads: read,
  getWorkload: read,
  getClusterSummary: read,
};

const allowed: Record<Exclude<Permission, "agent" | "public">, readonly Role[]> = {
  read: ["viewer", "operator", "admin"],
  write: ["operator", "admin"],
  admin: ["admin"],
};

/** Whether `role` may call a method needing `permission` (agents are further checked against the node). */
export function roleAllows(role: Role, permission: Permission): boolean {
  if (permission === "public") return true;
  if (permission === "agent") return role === "agent" || role === "admin";
  return allowed[permission].includes(role);
}

/** The roles that hold a permission, for error messages. */
export function rolesFor(permission: Permission): readonly Role[] {
  if (permission === "public") return [];
  if (permission === "agent") return ["agent", "admin"];
  return allowed[permission];
}
