import type { api } from "@persys/schema";
import type { CallOptions, CallRunner } from "../client/call-runner.js";

/** Roles of people and tools (tokens and user certificates). */
export type UserRoleName = "admin" | "operator" | "viewer";

/** Who the server says the caller is. */
export interface Identity {
  readonly name: string;
  /** `admin`, `operator`, `viewer`, `agent` or `control-plane`. */
  readonly role: string;
  /** `certificate`, `token` or `development` (an unauthenticated call to an `--insecure` server). */
  readonly via: string;
  /** For agents: their node. */
  readonly nodeId?: string;
}

/** A certificate with its private key (absent when the key stayed with the caller) and the cluster CA. */
export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem?: string;
  readonly caPem: string;
  readonly notAfter?: Date;
}

const seconds = (ms: number | undefined) => (ms === undefined ? 0 : Math.ceil(ms / 1000));

function certificate(r: {
  certPem: string;
  keyPem: string;
  caPem: string;
  notAfter?: Date | undefined;
}): IssuedCertificate {
  return {
    certPem: r.certPem,
    caPem: r.caPem,
    ...(r.keyPem ? { keyPem: r.keyPem } : {}),
    ...(r.notAfter ? { notAfter: r.notAfter } : {}),
  };
}

/**
 * Identities: who am I, API tokens for CI and apps, one-time join tokens for agents, and user
 * certificates. Everything but {@link SecurityApi.whoAmI} and {@link SecurityApi.joinNode} needs an
 * admin. Token values and private keys are in the answer of the call that makes them, and nowhere else.
 *
 * ```ts
 * const { token } = await client.security.createApiToken({ name: "ci", role: "operator", ttlMs: 86_400_000 });
 * const ci = new PersysClient({ endpoint, tls: { caCert: "ca.crt" }, token });
 * console.log(await ci.security.whoAmI()); // { name: "ci", role: "operator", via: "token" }
 * ```
 */
export class SecurityApi {
  /** @internal */
  constructor(
    private readonly runner: CallRunner,
    private readonly client: api.SecurityServiceClient,
  ) {}

  /** The caller as the server authenticated it. */
  async whoAmI(options: CallOptions = {}): Promise<Identity> {
    const r = await this.runner.unary<api.WhoAmIResponse>((md, o, cb) => this.client.whoAmI({}, md, o, cb), options);
    return { name: r.name, role: r.role, via: r.via, ...(r.nodeId ? { nodeId: r.nodeId } : {}) };
  }

  /** Creates a bearer token (`ttlMs` absent: no expiry). INVALID_ARGUMENT names a bad name or role. */
  async createApiToken(
    input: { name: string; role: UserRoleName; ttlMs?: number | undefined },
    options: CallOptions = {},
  ): Promise<{ token: string; apiToken: api.ApiToken }> {
    const request = { name: input.name, role: input.role, ttlSeconds: seconds(input.ttlMs) };
    const r = await this.runner.unary<api.CreateApiTokenResponse>(
      (md, o, cb) => this.client.createApiToken(request, md, o, cb),
      options,
    );
    return { token: r.token, apiToken: r.apiToken! };
  }

  /** Every API token's metadata, ordered by name (never secrets). */
  async listApiTokens(options: CallOptions = {}): Promise<api.ApiToken[]> {
    const r = await this.runner.unary<api.ListApiTokensResponse>(
      (md, o, cb) => this.client.listApiTokens({}, md, o, cb),
      options,
    );
    return r.tokens;
  }

  /** Revokes a token by id; resolves whether there was one (idempotent). */
  async revokeApiToken(id: string, options: CallOptions = {}): Promise<boolean> {
    const r = await this.runner.unary<api.RevokeApiTokenResponse>(
      (md, o, cb) => this.client.revokeApiToken({ id }, md, o, cb),
      options,
    );
    return r.revoked;
  }

  /**
   * Creates a one-time join token for an agent (default lifetime one hour), with `caCertHash`, the
   * pin of the cluster CA that agents without `ca.crt` check.
   */
  async createJoinToken(
    input: { ttlMs?: number | undefined; description?: string | undefined } = {},
    options: CallOptions = {},
  ): Promise<{ token: string; joinToken: api.JoinToken; caCertHash: string }> {
    const request = { ttlSeconds: seconds(input.ttlMs), description: input.description ?? "" };
    const r = await this.runner.unary<api.CreateJoinTokenResponse>(
      (md, o, cb) => this.client.createJoinToken(request, md, o, cb),
      options,
    );
    return { token: r.token, joinToken: r.joinToken!, caCertHash: r.caCertHash };
  }

  /** Every join token kept, with whether it was used and by which node. */
  async listJoinTokens(options: CallOptions = {}): Promise<api.JoinToken[]> {
    const r = await this.runner.unary<api.ListJoinTokensResponse>(
      (md, o, cb) => this.client.listJoinTokens({}, md, o, cb),
      options,
    );
    return r.tokens;
  }

  /** Revokes a join token by id; resolves whether there was one (idempotent). */
  async revokeJoinToken(id: string, options: CallOptions = {}): Promise<boolean> {
    const r = await this.runner.unary<api.RevokeJoinTokenResponse>(
      (md, o, cb) => this.client.revokeJoinToken({ id }, md, o, cb),
      options,
    );
    return r.revoked;
  }

  /** The cluster CA certificate and its `sha256:` public key pin. */
  async clusterCa(options: CallOptions = {}): Promise<{ caPem: string; caCertHash: string }> {
    const r = await this.runner.unary<api.GetClusterCaResponse>(
      (md, o, cb) => this.client.getClusterCa({}, md, o, cb),
      options,
    );
    return { caPem: r.caPem, caCertHash: r.caCertHash };
  }

  /**
   * Exchanges a join token for the agent certificate of `nodeId` (works once per token; a used,
   * expired or unknown token: UNAUTHENTICATED; a retried join whose first attempt reached the server
   * fails as used). Agents normally join with `persys-agent`.
   */
  async joinNode(
    input: { joinToken: string; nodeId: string; csrPem?: string | undefined; hosts?: readonly string[] | undefined },
    options: CallOptions = {},
  ): Promise<IssuedCertificate> {
    const request = {
      joinToken: input.joinToken,
      nodeId: input.nodeId,
      csrPem: input.csrPem ?? "",
      hosts: [...(input.hosts ?? [])],
    };
    const r = await this.runner.unary<api.JoinNodeResponse>(
      (md, o, cb) => this.client.joinNode(request, md, o, cb),
      options,
    );
    return certificate(r);
  }

  /** A client certificate for a person or tool (CN `name`, O `role`) with a new key. */
  async issueUserCertificate(
    input: { name: string; role: UserRoleName; ttlMs?: number | undefined },
    options: CallOptions = {},
  ): Promise<IssuedCertificate> {
    const request = { name: input.name, role: input.role, ttlSeconds: seconds(input.ttlMs) };
    const r = await this.runner.unary<api.IssueUserCertificateResponse>(
      (md, o, cb) => this.client.issueUserCertificate(request, md, o, cb),
      options,
    );
    return certificate(r);
  }
}
