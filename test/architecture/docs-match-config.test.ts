/** docs/operations.md lists every configuration key with its environment variable and flag. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { configLeaves } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { serverConfigSchema } from "../../controlplane/src/config/server-config.js";

const doc = readFileSync(resolve(import.meta.dirname, "../../docs/operations.md"), "utf8");

describe("docs/operations.md", () => {
  it.each(configLeaves(serverConfigSchema).map((l) => [l.path, l]))("documents %s", (_, leaf) => {
    expect(doc).toContain(`| \`${leaf.path}\` | \`${leaf.env}\` | \`${leaf.flag}\` |`);
  });
});
