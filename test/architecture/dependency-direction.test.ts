/**
 * Keeps the dependency direction checkable: schema ← sdk ← provider; schema ← controlplane, agent;
 * pulumi (the typed Pulumi classes) on no Persys package; controlplane and agent never import each
 * other, and no package reaches into a sibling's files.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

const allowed: Record<string, string[]> = {
  schema: [],
  controlplane: ["@persys/schema"],
  agent: ["@persys/schema"],
  sdk: ["@persys/schema"],
  provider: ["@persys/sdk"],
  // User programs load @persys/pulumi: it depends on @pulumi/pulumi only, no Persys package.
  pulumi: [],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sourceFiles(path);
    return /\.(ts|mts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

const importPattern = /(?:^|\s)(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  return [...text.matchAll(importPattern)].map((m) => (m[1] ?? m[2]) as string);
}

describe("dependency direction", () => {
  for (const [pkg, permitted] of Object.entries(allowed)) {
    it(`${pkg} imports only ${permitted.join(", ") || "no other Persys package"}`, () => {
      const violations: string[] = [];
      for (const file of sourceFiles(join(root, pkg, "src"))) {
        for (const specifier of importsOf(file)) {
          const where = relative(root, file);
          if (specifier.startsWith("@persys/") && !permitted.includes(specifier.split("/").slice(0, 2).join("/"))) {
            violations.push(`${where} imports ${specifier}`);
          }
          if (specifier.startsWith(".")) {
            const target = relative(join(root, pkg), resolve(join(file, ".."), specifier));
            if (target.startsWith("..")) violations.push(`${where} reaches outside ${pkg}/ with ${specifier}`);
          }
        }
      }
      expect(violations).toEqual([]);
    });
  }

  it("finds the imports it checks (the scanner is not blind)", () => {
    const files = sourceFiles(join(root, "controlplane", "src"));
    expect(files.flatMap(importsOf)).toContain("@persys/schema");
  });
});
