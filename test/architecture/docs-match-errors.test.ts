/** docs/errors.md lists every error code with the registry's HTTP status and retryability. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { errorCodes, errorRegistry } from "@persys/schema";
import { describe, expect, it } from "vitest";

const doc = readFileSync(resolve(import.meta.dirname, "../../docs/errors.md"), "utf8");

describe("docs/errors.md", () => {
  it.each(errorCodes)("documents %s as in the registry", (code) => {
    const d = errorRegistry[code];
    expect(doc).toContain(`| \`${code}\` | ${d.http} |`);
    expect(doc).toMatch(new RegExp(`\\| \`${code}\` \\| ${d.http} \\| \\w+ \\| ${d.retryable ? "yes" : "no"} \\|`));
  });
});
