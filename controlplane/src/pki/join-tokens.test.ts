/**
 * Join tokens against both state stores: the embedded one in a temporary folder and the real etcd the
 * test command starts (`PERSYS_TEST_ETCD_ENDPOINTS`; the suite fails loudly without it, as the others do).
 */
import { randomBytes } from "node:crypto";
import { PersysError } from "@persys/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openStateStore } from "../state/open-state-store.js";
import type { StateStore } from "../state/state-store.js";
import { decodeJson } from "../state/value-codec.js";
import { JoinTokenError, type JoinTokenFailure, JoinTokenStore } from "./join-tokens.js";
import { temporaryDirs } from "./testing/tls-test-support.js";

const HOUR = 60 * 60 * 1000;
const dirs = temporaryDirs("persys-join-tokens-");
afterAll(() => dirs.cleanup());

function etcdEndpoints(): string[] {
  const value = process.env.PERSYS_TEST_ETCD_ENDPOINTS;
  if (!value) {
    throw new Error(
      "etcd is not available to this test run (PERSYS_TEST_ETCD_ENDPOINTS is unset). " +
        "Run with ./scripts/test.sh, or source the dev environment that starts etcd.",
    );
  }
  return value.split(",");
}

const backends: [string, () => Promise<StateStore>][] = [
  ["embedded", () => openStateStore({ kind: "embedded", dataDir: dirs.make() })],
  [
    "etcd",
    () =>
      openStateStore({
        kind: "etcd",
        endpoints: etcdEndpoints(),
        prefix: `/persys-test/join-tokens-${process.pid}-${randomBytes(4).toString("hex")}/`,
      }),
  ],
];

async function refusal(promise: Promise<unknown>): Promise<PersysError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PersysError);
  return error as PersysError;
}

async function joinRefusal(promise: Promise<unknown>, reason: JoinTokenFailure): Promise<JoinTokenError> {
  const error = await refusal(promise);
  expect(error).toBeInstanceOf(JoinTokenError);
  expect(error.code).toBe("UNAUTHENTICATED");
  expect(error.retryable).toBe(false);
  expect((error as JoinTokenError).reason).toBe(reason);
  expect(error.details).toEqual([{ path: "token", reason }]);
  return error as JoinTokenError;
}

describe.each(backends)("JoinTokenStore on the %s store", (_kind, open) => {
  let store: StateStore;
  let clock = Date.parse("2030-01-01T00:00:00Z");
  const now = () => clock;
  beforeAll(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.deletePrefix("/persys/");
    clock = Date.parse("2030-01-01T00:00:00Z");
  });
  afterAll(async () => {
    await store?.close();
  });

  const tokens = () => new JoinTokenStore(store, { now });

  it("creates tokens of the kubeadm form <6>.<16> of [a-z0-9], each different", async () => {
    const created = await Promise.all(Array.from({ length: 10 }, () => tokens().create({ ttlMs: HOUR })));
    for (const c of created) {
      expect(c.token).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
      expect(c.token.startsWith(`${c.id}.`)).toBe(true);
      expect(c.expiresAt.getTime()).toBe(clock + HOUR);
    }
    expect(new Set(created.map((c) => c.id)).size).toBe(10);
  });

  it("stores only the SHA-256 of the secret, with the expiry and a lease", async () => {
    const { token, id } = await tokens().create({ ttlMs: HOUR, description: "rack 4" });
    const kv = await store.get(`/persys/join-tokens/${id}`);
    expect(kv).toBeDefined();
    const text = Buffer.from(kv!.value).toString("utf8");
    const secret = token.split(".")[1]!;
    expect(text).not.toContain(secret);
    const record = decodeJson<Record<string, unknown>>(kv!.value);
    expect(record).toMatchObject({
      id,
      description: "rack 4",
      used: false,
      expiresAt: new Date(clock + HOUR).toISOString(),
    });
    expect(record.secretSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(kv!.lease).toBeDefined();
  });

  it("consumes a token once: the second join, even for the same node, is refused as used", async () => {
    const { token, id } = await tokens().create({ ttlMs: HOUR, description: "n1" });
    expect(await tokens().consume(token, "n1")).toEqual({ id, nodeId: "n1", description: "n1" });
    await joinRefusal(tokens().consume(token, "n1"), "used");
    await joinRefusal(tokens().consume(token, "n2"), "used");
    const [info] = await tokens().list();
    expect(info).toMatchObject({ id, used: true, usedBy: "n1", usedAt: new Date(clock) });
  });

  it("lets exactly one of many concurrent joins with one token succeed (compare-and-swap)", async () => {
    const { token } = await tokens().create({ ttlMs: HOUR });
    // Separate JoinTokenStore instances: as if on several control planes.
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => new JoinTokenStore(store, { now }).consume(token, `node-${i}`)),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") {
        expect(r.reason).toBeInstanceOf(JoinTokenError);
        expect((r.reason as JoinTokenError).reason).toBe("used");
      }
    }
    const winner = (won[0] as PromiseFulfilledResult<{ nodeId: string }>).value.nodeId;
    expect((await tokens().list())[0]!.usedBy).toBe(winner);
  });

  it("refuses an expired token, and does not mark it used", async () => {
    const { token, id } = await tokens().create({ ttlMs: HOUR });
    clock += HOUR;
    const error = await joinRefusal(tokens().consume(token, "n1"), "expired");
    expect(error.tokenId).toBe(id);
    expect(error.message).toMatch(/expired/);
    expect((await tokens().list())[0]).toMatchObject({ id, expired: true, used: false });
  });

  it("accepts a token a moment before it expires", async () => {
    const { token } = await tokens().create({ ttlMs: HOUR });
    clock += HOUR - 1;
    await expect(tokens().consume(token, "n1")).resolves.toMatchObject({ nodeId: "n1" });
  });

  it.each<[string, (token: string) => string]>([
    ["a wrong secret", (t) => t.slice(0, 7) + (t.endsWith("a".repeat(16)) ? "b" : "a").repeat(16)],
    ["an unknown id", (t) => `zzzzzz${t.slice(6)}`],
    ["an empty string", () => ""],
    ["upper case", (t) => t.toUpperCase()],
    ["a short secret", (t) => t.slice(0, -1)],
    ["no dot", (t) => t.replace(".", "")],
    ["surrounding space", (t) => ` ${t}`],
  ])("refuses %s as invalid, saying nothing more", async (_name, mangle) => {
    const { token } = await tokens().create({ ttlMs: HOUR });
    const error = await joinRefusal(tokens().consume(mangle(token), "n1"), "invalid");
    expect(error.message).toBe("join token is invalid");
    // The real token still works afterwards.
    await expect(tokens().consume(token, "n1")).resolves.toMatchObject({ nodeId: "n1" });
  });

  it("refuses a revoked token; revoking is idempotent", async () => {
    const { token, id } = await tokens().create({ ttlMs: HOUR });
    expect(await tokens().revoke(id)).toBe(true);
    expect(await tokens().revoke(token)).toBe(false);
    await joinRefusal(tokens().consume(token, "n1"), "invalid");
    expect(await tokens().list()).toEqual([]);
  });

  it("lists tokens with their state and never their secrets", async () => {
    const a = await tokens().create({ ttlMs: HOUR, description: "a" });
    const b = await tokens().create({ ttlMs: 2 * HOUR, description: "b" });
    await tokens().consume(a.token, "n1");
    clock += HOUR + 1;
    const listed = await tokens().list();
    expect(listed.map((t) => t.id).sort()).toEqual([a.id, b.id].sort());
    expect(listed.find((t) => t.id === a.id)).toMatchObject({ used: true, usedBy: "n1", expired: true });
    expect(listed.find((t) => t.id === b.id)).toMatchObject({ used: false, expired: false, description: "b" });
    const text = JSON.stringify(listed);
    expect(text).not.toContain(a.token.split(".")[1]);
    expect(text).not.toContain("secretSha256");
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["a zero TTL", { ttlMs: 0 }, "ttlMs"],
    ["a TTL over a year", { ttlMs: 366 * 24 * HOUR }, "ttlMs"],
    ["a long description", { ttlMs: HOUR, description: "x".repeat(257) }, "description"],
  ])("create refuses %s with INVALID_ARGUMENT", async (_name, options, path) => {
    const error = await refusal(tokens().create(options));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.details.map((d) => d.path)).toEqual([path]);
  });

  it("consume refuses a malformed node id with INVALID_ARGUMENT, leaving the token unused", async () => {
    const { token } = await tokens().create({ ttlMs: HOUR });
    const error = await refusal(tokens().consume(token, "a/b"));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect((await tokens().list())[0]!.used).toBe(false);
  });

  it("keeps records under the given cluster prefix", async () => {
    const scoped = new JoinTokenStore(store, { prefix: "/other/", now });
    const { token, id } = await scoped.create({ ttlMs: HOUR });
    expect(await store.get(`/other/join-tokens/${id}`)).toBeDefined();
    await joinRefusal(tokens().consume(token, "n1"), "invalid");
    await store.deletePrefix("/other/");
  });
});
