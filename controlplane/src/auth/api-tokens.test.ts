import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { openStateStore } from "../state/open-state-store.js";
import type { StateStore } from "../state/state-store.js";
import { ApiTokenStore } from "./api-tokens.js";

const dirs: string[] = [];
const stores: StateStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function tokenStore(now: () => number = Date.now) {
  const dir = mkdtempSync(join(tmpdir(), "persys-tokens-"));
  dirs.push(dir);
  const store = await openStateStore({ kind: "embedded", dataDir: dir });
  stores.push(store);
  return { tokens: new ApiTokenStore(store, "/persys/", now, 0), dir };
}

const code = async (p: Promise<unknown>) => {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PersysError);
  return (error as PersysError).code;
};

function bytesUnder(dir: string): string {
  let out = "";
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out += readFileSync(path).toString("latin1");
  }
  return out;
}

describe("API tokens", () => {
  it("a created token authenticates as its name and role", async () => {
    const { tokens } = await tokenStore();
    const { token } = await tokens.create({ name: "ci", role: "operator" });
    expect(token).toMatch(/^psy_[a-z0-9]{12}_[A-Za-z0-9]{40}$/);
    await expect(tokens.verify(token)).resolves.toEqual({ name: "ci", role: "operator", via: "token" });
  });

  it("stores only a hash: the secret never reaches the store's files", async () => {
    const { tokens, dir } = await tokenStore();
    const { token } = await tokens.create({ name: "ci", role: "viewer" });
    const secret = token.split("_")[2]!;
    expect(bytesUnder(dir)).not.toContain(secret);
  });

  it.each([
    ["malformed", "not-a-token"],
    ["unknown id", "psy_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
  ])("refuses a %s token with UNAUTHENTICATED", async (_name, token) => {
    const { tokens } = await tokenStore();
    expect(await code(tokens.verify(token))).toBe("UNAUTHENTICATED");
  });

  it("refuses a token whose secret is wrong", async () => {
    const { tokens } = await tokenStore();
    const { token } = await tokens.create({ name: "ci", role: "viewer" });
    const forged = `${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`;
    expect(await code(tokens.verify(forged))).toBe("UNAUTHENTICATED");
  });

  it("refuses an expired token and a revoked one", async () => {
    let now = 1_000_000;
    const { tokens } = await tokenStore(() => now);
    const short = await tokens.create({ name: "short", role: "viewer", ttlMs: 60_000 });
    await expect(tokens.verify(short.token)).resolves.toMatchObject({ name: "short" });
    now += 60_001;
    expect(await code(tokens.verify(short.token))).toBe("UNAUTHENTICATED");
    const other = await tokens.create({ name: "other", role: "admin" });
    expect(await tokens.revoke(other.record.id)).toBe(true);
    expect(await tokens.revoke(other.record.id)).toBe(false);
    expect(await code(tokens.verify(other.token))).toBe("UNAUTHENTICATED");
  });
});
