import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { afterAll, describe, expect, it } from "vitest";
import { type JoinClusterOptions, joinCluster } from "./join-cluster.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A folder holding node.crt/node.key/ca.crt, the certificate self-signed for `cn` (openssl). */
function identityDir(cn: string): string {
  const dir = mkdtempSync(join(tmpdir(), "persys-join-"));
  dirs.push(dir);
  const made = spawnSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "1",
      "-subj",
      `/CN=${cn}/O=agent`,
    ].concat(["-keyout", join(dir, "node.key"), "-out", join(dir, "node.crt")]),
    { encoding: "utf8" },
  );
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  writeFileSync(join(dir, "ca.crt"), readFileSync(join(dir, "node.crt")));
  return dir;
}

async function failure(p: Promise<unknown>): Promise<PersysError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PersysError);
  return error as PersysError;
}

// Port 9 (discard) on loopback: nothing answers, so any attempt to call out fails fast.
const base = (dir: string): JoinClusterOptions => ({
  controlPlane: "127.0.0.1:9",
  joinToken: "abcdef.0123456789abcdef",
  nodeId: "n1",
  trust: { caCertHash: `sha256:${"a".repeat(64)}` },
  dir,
  timeoutMs: 2_000,
});

describe("joinCluster", () => {
  it("keeps an identity that is already there for this node, without calling out", async () => {
    const dir = identityDir("node:n1");
    const before = readFileSync(join(dir, "node.crt"), "utf8");
    const result = await joinCluster(base(dir));
    expect(result.joined).toBe(false);
    expect(result.files.certPath).toBe(join(dir, "node.crt"));
    expect(readFileSync(join(dir, "node.crt"), "utf8")).toBe(before);
  });

  it.each<[string, (dir: string) => JoinClusterOptions, string]>([
    ["a certificate of another node", () => base(identityDir("node:other")), "certFile"],
    ["a malformed pin", (dir) => ({ ...base(dir), trust: { caCertHash: "sha256:nothex" } }), "caCertHash"],
    ["a missing CA file", (dir) => ({ ...base(dir), trust: { caFile: join(dir, "nope.crt") } }), "caFile"],
    ["plaintext without insecure", (dir) => ({ ...base(dir), controlPlane: "http://127.0.0.1:9" }), "controlPlane"],
    ["a bad endpoint", (dir) => ({ ...base(dir), controlPlane: "a/b/c" }), "controlPlane"],
  ])("refuses %s with INVALID_CONFIG", async (_name, options, path) => {
    const dir = mkdtempSync(join(tmpdir(), "persys-join-"));
    dirs.push(dir);
    const error = await failure(joinCluster(options(dir)));
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.details.map((d) => d.path)).toEqual([path]);
  });

  it("answers UNAVAILABLE when the control plane cannot be reached to fetch its CA", async () => {
    const dir = mkdtempSync(join(tmpdir(), "persys-join-"));
    dirs.push(dir);
    expect((await failure(joinCluster(base(dir)))).code).toBe("UNAVAILABLE");
  });
});
