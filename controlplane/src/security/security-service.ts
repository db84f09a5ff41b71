import { type api, caPublicKeyPin, type FieldViolation, invalid, PersysError } from "@persys/schema";
import type { CallContext } from "../api/persys-api.js";
import type { ApiTokenRecord, ApiTokenStore } from "../auth/api-tokens.js";
import type { IssuedCertificate, LeafOptions } from "../pki/cluster-ca.js";
import { type JoinTokenInfo, type JoinTokenStore, MAX_JOIN_TOKEN_TTL_MS } from "../pki/join-tokens.js";
import { isUserRole, isValidNodeId, isValidUserName, type UserRole } from "../pki/principal.js";

/** Default lifetime of a join token: one hour. */
export const DEFAULT_JOIN_TOKEN_TTL_SECONDS = 3600;
const MAX_JOIN_TOKEN_TTL_SECONDS = MAX_JOIN_TOKEN_TTL_MS / 1000;
/** Longest lifetime of an API token or user certificate asked for: ten years. */
const MAX_TTL_SECONDS = 3652 * 24 * 3600;

/** What the service needs of the cluster CA (`ClusterCa` has it). */
export interface SecurityCa {
  readonly certPem: string;
  issueAgent(nodeId: string, options?: LeafOptions & { hosts?: readonly string[] }): Promise<IssuedCertificate>;
  issueUser(name: string, role: UserRole, options?: LeafOptions): Promise<IssuedCertificate>;
  /**
   * Signs a PKCS#10 request for the agent of `nodeId` (the key stays on the node). Optional: without
   * it, requests that carry a CSR are refused and the server generates keys.
   */
  signAgentCsr?(
    nodeId: string,
    csrPem: string,
    options?: LeafOptions & { hosts?: readonly string[] },
  ): Promise<Omit<IssuedCertificate, "keyPem">>;
}

export interface SecurityServiceDeps {
  readonly tokens: Pick<ApiTokenStore, "create" | "list" | "revoke">;
  readonly joinTokens: Pick<JoinTokenStore, "create" | "list" | "revoke" | "consume">;
  readonly ca: SecurityCa;
}

const bad = (details: FieldViolation[], what: string) => invalid("INVALID_ARGUMENT", details, what);

function checkTtl(seconds: number, max: number, path = "ttlSeconds"): FieldViolation[] {
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > max)
    return [{ path, reason: `must be between 0 and ${max} seconds` }];
  return [];
}

function checkRole(role: string): FieldViolation[] {
  return isUserRole(role) ? [] : [{ path: "role", reason: "must be admin, operator or viewer" }];
}

function checkName(name: string): FieldViolation[] {
  return isValidUserName(name) ? [] : [{ path: "name", reason: "must be 1-128 of A-Z a-z 0-9 . _ @ -" }];
}

function checkNodeId(nodeId: string): FieldViolation[] {
  return isValidNodeId(nodeId) ? [] : [{ path: "nodeId", reason: "must be 1-253 of A-Z a-z 0-9 . _ -" }];
}

function apiToken(record: ApiTokenRecord): api.ApiToken {
  return {
    id: record.id,
    name: record.name,
    role: record.role,
    createdAt: new Date(record.createdAt),
    ...(record.expiresAt ? { expiresAt: new Date(record.expiresAt) } : {}),
  };
}

function joinToken(info: JoinTokenInfo): api.JoinToken {
  return {
    id: info.id,
    description: info.description,
    createdAt: info.createdAt,
    expiresAt: info.expiresAt,
    expired: info.expired,
    used: info.used,
    usedBy: info.usedBy ?? "",
    ...(info.usedAt ? { usedAt: info.usedAt } : {}),
  };
}

/**
 * The `persys.api.v1.SecurityService`: who-am-I, API tokens, join tokens and the certificates of
 * agents and users, over the token stores and the cluster CA. Authorisation (who may call what,
 * agents only for their own node) and auditing happen in front of it (`auth/api-permissions.ts`);
 * this checks input and never logs or records a secret: token values and private keys appear only in
 * the responses that create them.
 */
export class SecurityService {
  constructor(private readonly deps: SecurityServiceDeps) {}

  /** @throws PersysError UNAUTHENTICATED when the call carries no authenticated principal. */
  async whoAmI(_request: api.WhoAmIRequest, ctx: CallContext): Promise<api.WhoAmIResponse> {
    const p = ctx.principal;
    if (!p) throw new PersysError("UNAUTHENTICATED", "the call was not authenticated");
    return { name: p.name, role: p.role, via: p.via, nodeId: p.nodeId ?? "" };
  }

  /** @throws PersysError INVALID_ARGUMENT naming each bad field (nothing is created). */
  async createApiToken(request: api.CreateApiTokenRequest): Promise<api.CreateApiTokenResponse> {
    const problems = [
      ...checkName(request.name),
      ...checkRole(request.role),
      ...checkTtl(request.ttlSeconds, MAX_TTL_SECONDS),
    ];
    if (problems.length > 0) throw bad(problems, "API token");
    const { token, record } = await this.deps.tokens.create({
      name: request.name,
      role: request.role as UserRole,
      ...(request.ttlSeconds > 0 ? { ttlMs: request.ttlSeconds * 1000 } : {}),
    });
    return { token, apiToken: apiToken(record) };
  }

  async listApiTokens(_request: api.ListApiTokensRequest): Promise<api.ListApiTokensResponse> {
    const records = await this.deps.tokens.list();
    records.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    return { tokens: records.map(apiToken) };
  }

  /** Idempotent: a missing token is a success with `revoked: false`. */
  async revokeApiToken(request: api.RevokeApiTokenRequest): Promise<api.RevokeApiTokenResponse> {
    if (!/^[a-z0-9]{1,64}$/.test(request.id)) throw bad([{ path: "id", reason: "must be a token id" }], "token");
    return { revoked: await this.deps.tokens.revoke(request.id) };
  }

  async createJoinToken(request: api.CreateJoinTokenRequest): Promise<api.CreateJoinTokenResponse> {
    const problems = checkTtl(request.ttlSeconds, MAX_JOIN_TOKEN_TTL_SECONDS);
    if (request.description.length > 256) problems.push({ path: "description", reason: "at most 256 characters" });
    if (problems.length > 0) throw bad(problems, "join token");
    const ttlSeconds = request.ttlSeconds || DEFAULT_JOIN_TOKEN_TTL_SECONDS;
    const created = await this.deps.joinTokens.create({ ttlMs: ttlSeconds * 1000, description: request.description });
    return {
      token: created.token,
      joinToken: {
        id: created.id,
        description: request.description,
        createdAt: new Date(created.expiresAt.getTime() - ttlSeconds * 1000),
        expiresAt: created.expiresAt,
        expired: false,
        used: false,
        usedBy: "",
      },
      caCertHash: caPublicKeyPin(this.deps.ca.certPem),
    };
  }

  /** Every join token still kept (used and expired ones for a day after expiry), oldest first. */
  async listJoinTokens(_request: api.ListJoinTokensRequest): Promise<api.ListJoinTokensResponse> {
    const infos = await this.deps.joinTokens.list();
    infos.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
    return { tokens: infos.map(joinToken) };
  }

  /** Idempotent; INVALID_ARGUMENT for something that is not a join token id. */
  async revokeJoinToken(request: api.RevokeJoinTokenRequest): Promise<api.RevokeJoinTokenResponse> {
    return { revoked: await this.deps.joinTokens.revoke(request.id) };
  }

  async getClusterCa(_request: api.GetClusterCaRequest): Promise<api.GetClusterCaResponse> {
    return { caPem: this.deps.ca.certPem, caCertHash: caPublicKeyPin(this.deps.ca.certPem) };
  }

  /**
   * Consumes the join token, then issues the node's certificate. The input is checked first, so a
   * malformed request does not use the token up.
   *
   * @throws PersysError INVALID_ARGUMENT for a bad node id, host or CSR; UNAUTHENTICATED for an
   * unknown, used, revoked or expired token.
   */
  async joinNode(request: api.JoinNodeRequest): Promise<api.JoinNodeResponse> {
    const problems = checkNodeId(request.nodeId);
    if (request.joinToken === "") problems.push({ path: "joinToken", reason: "is required" });
    problems.push(...this.csrProblems(request.csrPem));
    if (problems.length > 0) throw bad(problems, "join request");
    await this.deps.joinTokens.consume(request.joinToken, request.nodeId);
    return this.issueNode(request.nodeId, request.csrPem, request.hosts);
  }

  /** The caller's node certificate, renewed (the authoriser admitted only that node's agent, or an admin). */
  async renewNodeCertificate(request: api.RenewNodeCertificateRequest): Promise<api.RenewNodeCertificateResponse> {
    const problems = [...checkNodeId(request.nodeId), ...this.csrProblems(request.csrPem)];
    if (problems.length > 0) throw bad(problems, "renewal request");
    return this.issueNode(request.nodeId, request.csrPem, request.hosts);
  }

  async issueUserCertificate(request: api.IssueUserCertificateRequest): Promise<api.IssueUserCertificateResponse> {
    const problems = [
      ...checkName(request.name),
      ...checkRole(request.role),
      ...checkTtl(request.ttlSeconds, MAX_TTL_SECONDS),
    ];
    if (problems.length > 0) throw bad(problems, "user certificate request");
    const issued = await this.deps.ca.issueUser(
      request.name,
      request.role as UserRole,
      request.ttlSeconds > 0 ? { validityMs: request.ttlSeconds * 1000 } : {},
    );
    return { certPem: issued.certPem, keyPem: issued.keyPem, caPem: issued.caPem, notAfter: issued.notAfter };
  }

  private csrProblems(csrPem: string): FieldViolation[] {
    if (csrPem === "" || this.deps.ca.signAgentCsr) return [];
    return [
      { path: "csrPem", reason: "this control plane does not sign CSRs; omit it and the server generates the key" },
    ];
  }

  private async issueNode(nodeId: string, csrPem: string, hosts: readonly string[]): Promise<api.JoinNodeResponse> {
    const options = hosts.length > 0 ? { hosts } : {};
    if (csrPem !== "" && this.deps.ca.signAgentCsr) {
      const signed = await this.deps.ca.signAgentCsr(nodeId, csrPem, options);
      return { certPem: signed.certPem, keyPem: "", caPem: signed.caPem, notAfter: signed.notAfter };
    }
    const issued = await this.deps.ca.issueAgent(nodeId, options);
    return { certPem: issued.certPem, keyPem: issued.keyPem, caPem: issued.caPem, notAfter: issued.notAfter };
  }
}
