import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PkiError } from "./pki-error.js";
import { assertPrivateKeyFile, createFileExclusive, writeFileAtomic } from "./private-file.js";
import { temporaryDirs } from "./testing/tls-test-support.js";

const dirs = temporaryDirs("persys-private-file-");
afterEach(() => dirs.cleanup());

describe("private files", () => {
  it("writeFileAtomic sets the exact mode whatever the umask, and leaves no temporary file", async () => {
    const dir = dirs.make();
    const previous = process.umask(0o000);
    try {
      await writeFileAtomic(join(dir, "k"), "secret", 0o600);
    } finally {
      process.umask(previous);
    }
    expect(statSync(join(dir, "k")).mode & 0o777).toBe(0o600);
    await writeFileAtomic(join(dir, "k"), "new", 0o600);
    expect(readFileSync(join(dir, "k"), "utf8")).toBe("new");
    expect(readdirSync(dir)).toEqual(["k"]);
  });

  it("writeFileAtomic tightens a file that had a looser mode", async () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "k"), "old", { mode: 0o644 });
    await writeFileAtomic(join(dir, "k"), "new", 0o600);
    expect(statSync(join(dir, "k")).mode & 0o777).toBe(0o600);
  });

  it("createFileExclusive lets exactly one of concurrent creators win and never overwrites", async () => {
    const dir = dirs.make();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createFileExclusive(join(dir, "f"), `writer ${i}`, 0o600)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect(readFileSync(join(dir, "f"), "utf8")).toBe(`writer ${winner}`);
    expect(readdirSync(dir)).toEqual(["f"]);
  });

  it.each([0o600, 0o400])("assertPrivateKeyFile accepts mode %o", async (mode) => {
    const dir = dirs.make();
    writeFileSync(join(dir, "k"), "x", { mode });
    await expect(assertPrivateKeyFile(join(dir, "k"))).resolves.toBeUndefined();
  });

  it.each([0o640, 0o604, 0o660, 0o666, 0o700 | 0o010])("assertPrivateKeyFile refuses mode %o", async (mode) => {
    const dir = dirs.make();
    writeFileSync(join(dir, "k"), "x", { mode });
    const error = await assertPrivateKeyFile(join(dir, "k")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PkiError);
    expect((error as PkiError).reason).toBe("key-permissions");
  });
});
