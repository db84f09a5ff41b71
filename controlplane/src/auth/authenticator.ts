import { PersysError } from "@persys/schema";
import type { ApiTokenStore } from "./api-tokens.js";
import { type CallCredentials, type Principal, principalFromSubject } from "./principal.js";

export interface AuthenticatorOptions {
  /** Verifies bearer tokens; without it tokens are refused. */
  readonly tokens?: Pick<ApiTokenStore, "verify">;
  /**
   * Calls with neither a verified certificate nor a token act as an `admin` named `anonymous`
   * (development servers started with `--insecure` only).
   */
  readonly allowAnonymous?: boolean;
}

const ANONYMOUS: Principal = { name: "anonymous", role: "admin", via: "development" };

/**
 * Turns what a transport saw (a verified client certificate, a bearer token) into a principal.
 * A certificate wins over a token; a certificate of this cluster's CA that names no role is refused.
 */
export class Authenticator {
  constructor(private readonly options: AuthenticatorOptions = {}) {}

  /** @throws PersysError UNAUTHENTICATED naming what was missing or wrong. */
  async authenticate(credentials: CallCredentials | undefined): Promise<Principal> {
    if (credentials?.certificate) {
      const principal = principalFromSubject(credentials.certificate);
      if (principal) return principal;
      const { commonName = "", organization = "" } = credentials.certificate;
      throw new PersysError(
        "UNAUTHENTICATED",
        `client certificate CN=${commonName} O=${organization} names no Persys role (admin, operator, viewer, agent)`,
        { details: [{ path: "certificate", reason: "the organization (O) must be a Persys role" }] },
      );
    }
    if (credentials?.bearerToken !== undefined) {
      if (!this.options.tokens)
        throw new PersysError("UNAUTHENTICATED", "this server accepts no bearer tokens", {
          details: [{ path: "authorization", reason: "tokens are not enabled" }],
        });
      return this.options.tokens.verify(credentials.bearerToken);
    }
    if (this.options.allowAnonymous) return ANONYMOUS;
    throw new PersysError(
      "UNAUTHENTICATED",
      "no client certificate signed by the cluster CA and no bearer token: present one (persysctl contexts from `persys pki`, or a token)",
      { details: [{ path: "authorization", reason: "missing credentials" }] },
    );
  }
}

/** The token of an `authorization` header or metadata value (`Bearer <token>`), if any. */
export function bearerToken(header: unknown): string | undefined {
  if (typeof header !== "string") return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : header.trim() === "" ? undefined : "";
}
