/**
 * One-time, expiring join tokens for agents, as `kubeadm join` uses: `<id>.<secret>`, a 6-character id
 * and a 16-character secret of `[a-z0-9]` (about 82 bits). An agent presents one once to get the
 * certificate for its node id.
 *
 * Only the SHA-256 of the secret is stored, at `<prefix>join-tokens/<id>` in the state store, with the
 * expiry and a `used` flag; consuming flips the flag in a compare-and-swap transaction on the key's
 * revision, so of any number of concurrent joins with one token (on any control plane) exactly one wins.
 * Each record carries a lease that removes it `retentionMs` after its expiry.
 */
import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { type FieldViolation, invalid, PersysError } from "@persys/schema";
import type { KeyValue, StateStore } from "../state/state-store.js";
import { decodeJson, encodeJson } from "../state/value-codec.js";
import { isValidNodeId } from "./principal.js";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const ID_LENGTH = 6;
const SECRET_LENGTH = 16;
const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const ID = /^[a-z0-9]{6}$/;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Longest lifetime of a join token. */
export const MAX_JOIN_TOKEN_TTL_MS = 365 * DAY_MS;
/** Default lifetime, as kubeadm's. */
export const DEFAULT_JOIN_TOKEN_TTL_MS = DAY_MS;

/**
 * Why a join was refused: `invalid` (malformed, unknown, revoked or a wrong secret — told apart only in
 * the server log, never to the caller), `expired`, or `used` (already consumed, by any node).
 */
export type JoinTokenFailure = "invalid" | "expired" | "used";

const brand = Symbol.for("persys.join-token-error");

/**
 * A join refused (UNAUTHENTICATED, not retryable: the agent needs a new token). `reason` says why;
 * `tokenId` is set when the token was well formed.
 */
export class JoinTokenError extends PersysError {
  readonly reason: JoinTokenFailure;
  readonly tokenId: string | undefined;

  constructor(reason: JoinTokenFailure, tokenId: string | undefined, message: string) {
    super("UNAUTHENTICATED", message, { details: [{ path: "token", reason }] });
    this.name = "JoinTokenError";
    this.reason = reason;
    this.tokenId = tokenId;
    Object.defineProperty(this, brand, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

/** The stored record (JSON at `<prefix>join-tokens/<id>`). */
interface JoinTokenRecord {
  readonly id: string;
  /** Hex SHA-256 of the secret. */
  readonly secretSha256: string;
  readonly description: string;
  /** ISO times. */
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly used: boolean;
  readonly usedBy?: string;
  readonly usedAt?: string;
}

/** What `list` shows of a token: never the secret or its hash. */
export interface JoinTokenInfo {
  readonly id: string;
  readonly description: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  /** Whether it has expired (at the store's clock). */
  readonly expired: boolean;
  readonly used: boolean;
  /** The node that consumed it. */
  readonly usedBy?: string;
  readonly usedAt?: Date;
}

/** A new token: `token` is shown once to the operator and cannot be read back. */
export interface CreatedJoinToken {
  readonly token: string;
  readonly id: string;
  readonly expiresAt: Date;
}

/** A successful join. */
export interface ConsumedJoinToken {
  readonly id: string;
  readonly nodeId: string;
  readonly description: string;
}

export interface JoinTokenStoreOptions {
  /** The cluster's key prefix (as `ClusterKeys.prefix`); default `/persys/`. */
  readonly prefix?: string;
  /** How long a record stays after its expiry (shown as expired or used by `list`); default 1 day. */
  readonly retentionMs?: number;
  /** The clock (ms since the epoch); default `Date.now`. */
  readonly now?: () => number;
}

function randomText(length: number): string {
  let text = "";
  for (let i = 0; i < length; i++) text += ALPHABET[randomInt(ALPHABET.length)];
  return text;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

const MAX_ATTEMPTS = 8;

/** Join tokens in the state store. Safe to use from several control planes at once. */
export class JoinTokenStore {
  private readonly prefix: string;
  private readonly retentionMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: StateStore,
    options: JoinTokenStoreOptions = {},
  ) {
    this.prefix = `${options.prefix ?? "/persys/"}join-tokens/`;
    this.retentionMs = options.retentionMs ?? DAY_MS;
    this.now = options.now ?? Date.now;
  }

  private key(id: string): string {
    return this.prefix + id;
  }

  /**
   * Creates a token valid for `ttlMs` (default 1 day, at most 365 days). Bad arguments:
   * INVALID_ARGUMENT naming them. The token text is returned only here.
   */
  async create(options: { ttlMs?: number; description?: string } = {}): Promise<CreatedJoinToken> {
    const ttlMs = options.ttlMs ?? DEFAULT_JOIN_TOKEN_TTL_MS;
    const description = options.description ?? "";
    const details: FieldViolation[] = [];
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_JOIN_TOKEN_TTL_MS) {
      details.push({ path: "ttlMs", reason: `must be a whole number of ms from 1 to ${MAX_JOIN_TOKEN_TTL_MS}` });
    }
    if (typeof description !== "string" || description.length > 256) {
      details.push({ path: "description", reason: "must be a string of at most 256 characters" });
    }
    if (details.length > 0) throw invalid("INVALID_ARGUMENT", details, "join token request");
    const now = this.now();
    const expiresAt = new Date(now + ttlMs);
    const lease = await this.store.grantLease(Math.ceil((ttlMs + this.retentionMs) / 1000));
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const id = randomText(ID_LENGTH);
      const secret = randomText(SECRET_LENGTH);
      const record: JoinTokenRecord = {
        id,
        secretSha256: sha256Hex(secret),
        description,
        createdAt: new Date(now).toISOString(),
        expiresAt: expiresAt.toISOString(),
        used: false,
      };
      const result = await this.store.txn({
        compare: [{ key: this.key(id), target: "version", op: "=", value: 0 }],
        success: [{ type: "put", key: this.key(id), value: encodeJson(record), lease: lease.id }],
      });
      if (result.succeeded) return { token: `${id}.${secret}`, id, expiresAt };
    }
    await this.store.revokeLease(lease.id);
    throw new PersysError("INTERNAL", `no free join token id after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * Consumes `token` for `nodeId`: succeeds once per token, ever. Refusals are {@link JoinTokenError}s
   * (UNAUTHENTICATED); a bad node id is INVALID_ARGUMENT; store failures pass through (retryable ones may
   * be retried: a consume that was applied then fails with `used`).
   */
  async consume(token: string, nodeId: string): Promise<ConsumedJoinToken> {
    if (typeof nodeId !== "string" || !isValidNodeId(nodeId)) {
      throw invalid("INVALID_ARGUMENT", [{ path: "nodeId", reason: "must be 1-253 of A-Z a-z 0-9 . _ -" }]);
    }
    const match = typeof token === "string" ? TOKEN.exec(token) : null;
    if (!match) throw new JoinTokenError("invalid", undefined, "join token is invalid");
    const [, id, secret] = match as unknown as [string, string, string];
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const kv = await this.store.get(this.key(id));
      const record = kv && this.decode(kv);
      if (!kv || !record || !sameHash(record.secretSha256, sha256Hex(secret))) {
        throw new JoinTokenError("invalid", id, "join token is invalid");
      }
      if (record.used) {
        throw new JoinTokenError("used", id, `join token ${id} has already been used; create a new one`);
      }
      const now = this.now();
      if (now >= Date.parse(record.expiresAt)) {
        throw new JoinTokenError("expired", id, `join token ${id} expired at ${record.expiresAt}; create a new one`);
      }
      const consumed: JoinTokenRecord = { ...record, used: true, usedBy: nodeId, usedAt: new Date(now).toISOString() };
      const result = await this.store.txn({
        compare: [{ key: kv.key, target: "modRevision", op: "=", value: kv.modRevision }],
        success: [{ type: "put", key: kv.key, value: encodeJson(consumed), ...(kv.lease ? { lease: kv.lease } : {}) }],
      });
      if (result.succeeded) return { id, nodeId, description: record.description };
      // Someone changed the record in between (most likely consumed it): read it again.
    }
    throw new PersysError("CONFLICT", `join token ${id} kept changing while it was being consumed`);
  }

  /** Every token not yet removed by its lease, by id. */
  async list(): Promise<JoinTokenInfo[]> {
    const now = this.now();
    const infos: JoinTokenInfo[] = [];
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.store.range(this.prefix, { limit: 500, ...(startAfter ? { startAfter } : {}) });
      for (const kv of page.kvs) {
        const record = this.decode(kv);
        if (!record) continue;
        infos.push({
          id: record.id,
          description: record.description,
          createdAt: new Date(record.createdAt),
          expiresAt: new Date(record.expiresAt),
          expired: now >= Date.parse(record.expiresAt),
          used: record.used,
          ...(record.usedBy !== undefined ? { usedBy: record.usedBy } : {}),
          ...(record.usedAt !== undefined ? { usedAt: new Date(record.usedAt) } : {}),
        });
      }
      if (!page.more) return infos;
      startAfter = page.kvs.at(-1)!.key;
    }
  }

  /**
   * Deletes a token by id (or by its full text): it can no longer be consumed. Idempotent: `false` when
   * there was no such token. A malformed id: INVALID_ARGUMENT.
   */
  async revoke(idOrToken: string): Promise<boolean> {
    const id = typeof idOrToken === "string" ? idOrToken.split(".")[0]! : "";
    if (!ID.test(id)) throw invalid("INVALID_ARGUMENT", [{ path: "id", reason: "must be 6 of a-z 0-9" }]);
    const kv = await this.store.get(this.key(id));
    if (!kv) return false;
    const { deleted } = await this.store.delete(this.key(id));
    if (kv.lease) await this.store.revokeLease(kv.lease).catch(() => {});
    return deleted > 0;
  }

  private decode(kv: KeyValue): JoinTokenRecord | undefined {
    try {
      const record = decodeJson<JoinTokenRecord>(kv.value);
      return typeof record?.secretSha256 === "string" && typeof record.expiresAt === "string" ? record : undefined;
    } catch {
      return undefined;
    }
  }
}
