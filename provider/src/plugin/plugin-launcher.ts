/**
 * Packaging a Node.js provider so the Pulumi CLI can load it from a local folder.
 *
 * The engine looks for an executable named `pulumi-resource-<name>` in the folder a project names
 * in `Pulumi.yaml` (`plugins.providers: [{ name, path }]`) or in an installed plugin folder. A
 * folder holding a `PulumiPlugin.yaml` would instead be run through a language host
 * (`pulumi-language-nodejs`), so this writes no such file: the launcher is a plain shell script
 * that execs Node on the plugin's entry module with the absolute paths baked in, so it works
 * whatever PATH and working directory the engine starts it with.
 *
 * ```ts
 * const dir = "/tmp/persys-plugin";
 * writePluginLauncher({ dir, entry: "/abs/provider/dist/cmd/pulumi-resource-persys.js" });
 * // Pulumi.yaml: plugins: { providers: [{ name: persys, path: /tmp/persys-plugin }] }
 * ```
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

/** The Pulumi package name of the Persys provider. */
export const PERSYS_PACKAGE = "persys";

/** What {@link writePluginLauncher} writes. */
export interface PluginLauncherOptions {
  /** Folder to write into (created if missing); the `path:` of the project's plugin entry. */
  readonly dir: string;
  /** Absolute path of the module that calls `serveProviderPlugin`. */
  readonly entry: string;
  /** Pulumi package name; the executable is `pulumi-resource-<name>`. Default `persys`. */
  readonly name?: string;
  /** Node binary; default the one running this code, so the engine's PATH does not matter. */
  readonly node?: string;
  /** Arguments for Node before the entry, e.g. `["--import", "tsx"]` to run TypeScript. */
  readonly nodeArgs?: readonly string[];
  /** Extra environment for the plugin process (the engine passes its own environment through). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The executable name the engine looks for in a plugin folder. */
export function pluginExecutableName(name: string = PERSYS_PACKAGE): string {
  return `pulumi-resource-${name}`;
}

/**
 * Writes `<dir>/pulumi-resource-<name>` (mode 0755) and returns its path. Idempotent: rewriting
 * with the same options produces the same file. Throws on a relative entry or node path, or a
 * name that is not a Pulumi package name, before writing anything.
 */
export function writePluginLauncher(options: PluginLauncherOptions): string {
  const name = options.name ?? PERSYS_PACKAGE;
  const node = options.node ?? process.execPath;
  if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new TypeError(`invalid Pulumi package name ${JSON.stringify(name)}`);
  if (!isAbsolute(options.entry)) throw new TypeError(`plugin entry must be an absolute path: ${options.entry}`);
  if (!isAbsolute(node)) throw new TypeError(`node must be an absolute path: ${node}`);
  for (const key of Object.keys(options.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new TypeError(`invalid environment variable name ${key}`);
  }
  const exports = Object.entries(options.env ?? {}).map(([k, v]) => `export ${k}=${shellQuote(v)}\n`);
  const command = [node, ...(options.nodeArgs ?? []), options.entry].map(shellQuote).join(" ");
  const script =
    "#!/bin/sh\n" +
    `# Pulumi resource provider plugin "${name}": written by @persys/provider writePluginLauncher.\n` +
    "# The engine passes its address and flags as arguments and reads the gRPC port from stdout.\n" +
    exports.join("") +
    `exec ${command} "$@"\n`;
  mkdirSync(options.dir, { recursive: true });
  const path = join(options.dir, pluginExecutableName(name));
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return path;
}

/** Quotes a word for POSIX sh: single quotes, with embedded single quotes closed and escaped. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
