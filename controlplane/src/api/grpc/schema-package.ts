import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, parse } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "@persys/schema";

let cached: string | undefined;

/**
 * The root directory of the `@persys/schema` package (the one holding `proto/` and
 * `src/gen/json-schema/`), found from how Node resolves the package, so it works from the sources,
 * from `dist/` and through the workspace symlink alike. `PERSYS_SCHEMA_DIR` overrides the search.
 *
 * @throws Error when no directory with the package's `package.json` can be found.
 */
export function schemaPackageDir(): string {
  if (cached) return cached;
  const override = process.env.PERSYS_SCHEMA_DIR;
  const candidates = override ? [override] : [...resolvedEntries(), ...nodeModulesCopies(), siblingCheckout()];
  for (const start of candidates) {
    const root = packageRootAbove(start);
    if (root) {
      cached = root;
      return root;
    }
  }
  throw new Error(`cannot find the ${PACKAGE} package (looked from ${candidates.join(", ")}); set PERSYS_SCHEMA_DIR`);
}

/** `schema/proto`: the `.proto` sources (for reflection and proto-loader). */
export function protoDir(): string {
  return join(schemaPackageDir(), "proto");
}

/** `schema/src/gen/json-schema`: the generated JSON Schemas and the field index. */
export function jsonSchemaDir(): string {
  return join(schemaPackageDir(), "src", "gen", "json-schema");
}

function resolvedEntries(): string[] {
  try {
    return [createRequire(import.meta.url).resolve(PACKAGE)];
  } catch {
    return [];
  }
}

function nodeModulesCopies(): string[] {
  const found: string[] = [];
  let dir = dirname(fileURLToPath(import.meta.url));
  while (true) {
    const candidate = join(dir, "node_modules", ...PACKAGE.split("/"));
    if (existsSync(candidate)) found.push(candidate);
    const parent = dirname(dir);
    if (parent === dir) return found;
    dir = parent;
  }
}

/** controlplane/src/api/grpc → the repository's schema/ (also from controlplane/dist/api/grpc). */
function siblingCheckout(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..", "schema");
}

function packageRootAbove(start: string): string | undefined {
  let dir = start;
  const { root } = parse(start);
  while (true) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && existsSync(join(dir, "proto")) && isSchemaManifest(manifest)) return dir;
    if (dir === root) return undefined;
    dir = dirname(dir);
  }
}

function isSchemaManifest(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, "utf8")) as { name?: unknown }).name === PACKAGE;
  } catch {
    return false;
  }
}
