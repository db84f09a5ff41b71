import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pluginExecutableName, writePluginLauncher } from "./plugin-launcher.js";

const dir = mkdtempSync(join(tmpdir(), "persys-launcher-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// An entry module in a path with a space and a quote, to prove the launcher's quoting.
const entryDir = join(dir, "it's here");
const entry = join(entryDir, "entry.mjs");

describe("writePluginLauncher", () => {
  it("writes an executable pulumi-resource-<name> that runs the entry with the engine's arguments", () => {
    const pluginDir = join(dir, "plugin");
    mkdirSync(entryDir, { recursive: true });
    writeFileSync(entry, "console.log(JSON.stringify({ argv: process.argv.slice(2), probe: process.env.PROBE }));\n");
    const path = writePluginLauncher({ dir: pluginDir, entry, env: { PROBE: "a 'b' $c" } });
    expect(path).toBe(join(pluginDir, "pulumi-resource-persys"));
    expect(statSync(path).mode & 0o777).toBe(0o755);
    const out = execFileSync(path, ["127.0.0.1:1234", "--logtostderr", "-v=9"], { cwd: tmpdir(), encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ argv: ["127.0.0.1:1234", "--logtostderr", "-v=9"], probe: "a 'b' $c" });
  });

  it("passes node arguments before the entry", () => {
    const path = writePluginLauncher({ dir: join(dir, "args"), entry, nodeArgs: ["--no-warnings"], name: "probe" });
    expect(path.endsWith(pluginExecutableName("probe"))).toBe(true);
    expect(JSON.parse(execFileSync(path, [], { encoding: "utf8" })).argv).toEqual([]);
  });

  it.each([
    ["a relative entry", { entry: "entry.mjs" }, /absolute path/],
    ["a relative node", { entry, node: "node" }, /absolute path/],
    ["a bad package name", { entry, name: "Persys!" }, /invalid Pulumi package name/],
    ["a bad env name", { entry, env: { "A-B": "x" } }, /invalid environment variable name/],
  ])("rejects %s", (_name, opts, error) => {
    expect(() => writePluginLauncher({ dir: join(dir, "rejected"), ...opts })).toThrow(error);
  });
});
