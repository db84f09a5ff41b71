/**
 * persysctl is built only on the SDK's public API: files under sdk/src/cli import the SDK through
 * its entry point (sdk/src/index.ts), never its internals, the schema package or gRPC directly.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const cliDir = join(root, "sdk", "src", "cli");
const sdkEntry = join(root, "sdk", "src", "index.js");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(join(dir, e.name))
      : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")
        ? [join(dir, e.name)]
        : [],
  );
}

const importPattern = /(?:^|\s)(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

describe("persysctl's imports", () => {
  const allowedPackages = new Set(["commander", "yaml"]);
  const list = files(cliDir);

  it("finds the CLI's files", () => {
    expect(list.length).toBeGreaterThan(10);
  });

  it("uses the SDK through its entry point only", () => {
    const violations: string[] = [];
    for (const file of list) {
      for (const match of readFileSync(file, "utf8").matchAll(importPattern)) {
        const specifier = (match[1] ?? match[2])!;
        const where = relative(root, file);
        if (specifier.startsWith("node:") || allowedPackages.has(specifier)) continue;
        if (!specifier.startsWith(".")) {
          violations.push(`${where} imports the package ${specifier}`);
          continue;
        }
        const target = resolve(join(file, ".."), specifier);
        if (target !== sdkEntry && !target.startsWith(cliDir))
          violations.push(`${where} reaches into ${relative(root, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });
});
