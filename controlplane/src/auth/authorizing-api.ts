import { type api, PersysError } from "@persys/schema";
import type { CallContext } from "../api/persys-api.js";
import { type MethodRule, type Permission, roleAllows, rolesFor } from "./api-permissions.js";
import type { Authenticator } from "./authenticator.js";
import { describePrincipal, type Principal } from "./principal.js";
import type { RequestAudit } from "./request-audit.js";
import { checkSpecPolicy, type SpecPolicy } from "./spec-policy.js";

export interface AuthorizationDeps {
  readonly authenticator: Authenticator;
  readonly audit?: RequestAudit;
  readonly specPolicy: SpecPolicy;
  /** Service name in audit records and messages, e.g. `persys.api.v1`. */
  readonly service: string;
  /**
   * The workloads a request would apply, for the dangerous-spec policy, each with the request path
   * its fields are under (`""` for a single workload, `workloads[3]` in a batch).
   */
  readonly workloadsOf?: (method: string, request: unknown) => readonly AppliedWorkload[];
}

export interface AppliedWorkload {
  readonly workload: api.Workload | undefined;
  readonly path: string;
}

type AnyMethod = (request: unknown, ctx: CallContext) => unknown;

interface Scope {
  readonly workloadId?: string;
  readonly nodeId?: string;
}

function scopeOf(request: unknown): Scope {
  if (typeof request !== "object" || request === null) return {};
  const r = request as { workloadId?: unknown; nodeId?: unknown; workload?: { id?: unknown }; id?: unknown };
  const workloadId =
    typeof r.workloadId === "string" ? r.workloadId : typeof r.workload?.id === "string" ? r.workload.id : undefined;
  const nodeId = typeof r.nodeId === "string" ? r.nodeId : undefined;
  return { ...(workloadId ? { workloadId } : {}), ...(nodeId ? { nodeId } : {}) };
}

function deny(principal: Principal, method: string, permission: Permission, reason?: string): PersysError {
  const roles = rolesFor(permission).join(" or ");
  return new PersysError(
    "PERMISSION_DENIED",
    reason ?? `${describePrincipal(principal)} may not call ${method}: it needs ${roles}`,
    { details: [{ path: "role", reason: reason ?? `${principal.role} lacks ${permission} (needs ${roles})` }] },
  );
}

/**
 * The workloads a request would apply; none when it cannot be read (a malformed request: the core
 * rejects it with its own typed, in-band answer).
 */
function workloadsOrNone(deps: AuthorizationDeps, method: string, request: unknown): readonly AppliedWorkload[] {
  try {
    return deps.workloadsOf?.(method, request) ?? [];
  } catch {
    return [];
  }
}

/** Throws unless `principal` may make this call; agents may act only for their own node. */
function check(principal: Principal, method: string, rule: MethodRule, scope: Scope): void {
  if (!roleAllows(principal.role, rule.permission)) throw deny(principal, method, rule.permission);
  if (rule.permission === "agent" && principal.role === "agent" && scope.nodeId !== principal.nodeId) {
    throw deny(
      principal,
      method,
      rule.permission,
      `${describePrincipal(principal)} may only act for node ${principal.nodeId}, not ${scope.nodeId || "(none)"}`,
    );
  }
}

/**
 * `core` behind authentication and authorisation: every method in `rules` first resolves the
 * caller (UNAUTHENTICATED without valid credentials), checks the method's permission and, for
 * applies, the dangerous-spec policy (PERMISSION_DENIED naming the field), then calls the core with
 * `ctx.principal` set. Mutations (rules with `audit`) and every refusal are audited. Nothing reaches
 * the core when a check fails, so nothing is half-applied.
 */
export function authorizeApi<T extends object>(
  core: T,
  rules: Readonly<Record<keyof T, MethodRule>>,
  deps: AuthorizationDeps,
): T {
  const wrapped: Record<string, AnyMethod> = {};
  for (const [name, rule] of Object.entries(rules) as [string, MethodRule][]) {
    const target = (core as Record<string, AnyMethod>)[name];
    if (typeof target !== "function") throw new Error(`authorizeApi: the core has no method ${name}`);
    const method = `${deps.service}/${name}`;
    const admit = async (request: unknown, ctx: CallContext): Promise<CallContext> => {
      let principal: Principal | undefined;
      const scope = scopeOf(request);
      try {
        principal = rule.permission === "public" ? undefined : await deps.authenticator.authenticate(ctx.credentials);
        if (principal) {
          check(principal, method, rule, scope);
          for (const { workload, path } of workloadsOrNone(deps, name, request))
            checkSpecPolicy(workload, principal, deps.specPolicy, path);
        }
      } catch (error) {
        deps.audit?.record({ method, principal, requestId: ctx.requestId, ...scope, error });
        throw error;
      }
      return principal ? { ...ctx, principal, identity: principal.name } : ctx;
    };
    const audited = (ctx: CallContext, request: unknown, error?: unknown) => {
      if (rule.audit)
        deps.audit?.record({
          method,
          principal: ctx.principal,
          requestId: ctx.requestId,
          ...scopeOf(request),
          ...(error === undefined ? {} : { error }),
        });
    };
    wrapped[name] = rule.stream
      ? (request, ctx) =>
          (async function* () {
            const admitted = await admit(request, ctx);
            yield* target.call(core, request, admitted) as AsyncIterable<unknown>;
          })()
      : async (request, ctx) => {
          const admitted = await admit(request, ctx);
          try {
            const response = await target.call(core, request, admitted);
            audited(admitted, request);
            return response;
          } catch (error) {
            audited(admitted, request, error);
            throw error;
          }
        };
  }
  return wrapped as T;
}
