import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { PersysError } from "@persys/schema";
import type { StateStore } from "../state/state-store.js";
import { decodeJson, encodeJson } from "../state/value-codec.js";
import { isRole, type Principal, type UserRole } from "./principal.js";

/** A bearer token as stored: never the secret, only its SHA-256. */
export interface ApiTokenRecord {
  readonly id: string;
  readonly name: string;
  readonly role: UserRole;
  readonly secretSha256: string;
  readonly createdAt: string;
  /** ISO time after which the token is refused; absent: no expiry. */
  readonly expiresAt?: string;
}

/** `psy_<id>_<secret>`: the id finds the record, the secret proves possession. */
const TOKEN = /^psy_([a-z0-9]{12})_([A-Za-z0-9]{40})$/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const SECRET_ALPHABET = `${ALPHABET}ABCDEFGHIJKLMNOPQRSTUVWXYZ`;

function randomString(length: number, alphabet: string): string {
  const bytes = randomBytes(length);
  let out = "";
  // 256 is not a multiple of 36 or 62; the bias is below 2^-5 per character and irrelevant for 40 characters of secret.
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const unauthenticated = (reason: string) =>
  new PersysError("UNAUTHENTICATED", `bearer token refused: ${reason}`, {
    details: [{ path: "authorization", reason }],
  });

/**
 * API bearer tokens for CI, the SDK and browsers (`authorization: Bearer psy_...`), kept in the
 * state store under `<prefix>auth/tokens/<id>` as hashes. Verification results are cached for
 * `cacheMs` (default 5 s), so a revoked token stops working within that time and a busy client costs
 * one store read per period, not per call.
 */
export class ApiTokenStore {
  private readonly cache = new Map<string, { record: ApiTokenRecord | undefined; until: number }>();

  constructor(
    private readonly store: Pick<StateStore, "get" | "put" | "delete" | "range">,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
    private readonly cacheMs = 5_000,
  ) {}

  private key(id: string): string {
    return `${this.prefix}auth/tokens/${id}`;
  }

  /** Creates a token; the returned `token` is shown once and never stored. */
  async create(input: {
    name: string;
    role: UserRole;
    ttlMs?: number;
  }): Promise<{ token: string; record: ApiTokenRecord }> {
    const id = randomString(12, ALPHABET);
    const secret = randomString(40, SECRET_ALPHABET);
    const now = this.now();
    const record: ApiTokenRecord = {
      id,
      name: input.name,
      role: input.role,
      secretSha256: sha256(secret),
      createdAt: new Date(now).toISOString(),
      ...(input.ttlMs ? { expiresAt: new Date(now + input.ttlMs).toISOString() } : {}),
    };
    await this.store.put(this.key(id), encodeJson(record));
    return { token: `psy_${id}_${secret}`, record };
  }

  async list(): Promise<ApiTokenRecord[]> {
    const { kvs } = await this.store.range(`${this.prefix}auth/tokens/`);
    return kvs.map((kv) => decodeJson<ApiTokenRecord>(kv.value));
  }

  /** Revokes by id; idempotent. */
  async revoke(id: string): Promise<boolean> {
    this.cache.delete(id);
    const { deleted } = await this.store.delete(this.key(id));
    return deleted > 0;
  }

  /**
   * The principal a bearer token stands for.
   *
   * @throws PersysError UNAUTHENTICATED for a malformed, unknown, revoked or expired token.
   */
  async verify(token: string): Promise<Principal> {
    const match = TOKEN.exec(token.trim());
    if (!match) throw unauthenticated("not a Persys API token (psy_<id>_<secret>)");
    const [, id = "", secret = ""] = match;
    const record = await this.lookup(id);
    if (!record) throw unauthenticated("unknown or revoked token");
    const given = Buffer.from(sha256(secret), "hex");
    const stored = Buffer.from(record.secretSha256, "hex");
    if (given.length !== stored.length || !timingSafeEqual(given, stored))
      throw unauthenticated("unknown or revoked token");
    if (record.expiresAt && Date.parse(record.expiresAt) <= this.now())
      throw unauthenticated(`expired at ${record.expiresAt}`);
    if (!isRole(record.role)) throw unauthenticated("the token's role is unknown");
    return { name: record.name, role: record.role, via: "token" };
  }

  private async lookup(id: string): Promise<ApiTokenRecord | undefined> {
    const cached = this.cache.get(id);
    if (cached && cached.until > this.now()) return cached.record;
    const kv = await this.store.get(this.key(id));
    const record = kv ? decodeJson<ApiTokenRecord>(kv.value) : undefined;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, { record, until: this.now() + this.cacheMs });
    return record;
  }
}
