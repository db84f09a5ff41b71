/**
 * The cloud-init NoCloud seed of a VM: `user-data`, `meta-data` (always with `instance-id` and
 * `local-hostname`) and an optional `network-config`, on an ISO 9660 image labelled `cidata` that the
 * VM gets as a cdrom. cloud-init finds it by the label.
 *
 * ```ts
 * const seed = await buildSeedIso(
 *   { instanceId: "web-0-3f2a", hostname: "web-0", userData: "#cloud-config\nruncmd: [[touch, /ok]]\n" },
 *   "/var/lib/persys/vm/web-0/seed.iso",
 * );
 * // seed.sha256 changes exactly when the documents do.
 * ```
 *
 * Bad input fails with INVALID_SPEC before any file is written: oversized documents, a meta-data or
 * network-config that is not a YAML mapping, `#cloud-config` user-data that is not YAML.
 */
import { createHash } from "node:crypto";
import { chmod, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type FieldViolation, invalid } from "@persys/schema";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { findHostTool, type HostTool, runHostTool } from "./host-tool.js";

/** Largest single seed document, as the Go agent allowed (a spec it accepted is accepted here). */
export const maxSeedDocumentBytes = 256 * 1024;
/** Largest sum of all seed documents. */
export const maxSeedTotalBytes = 256 * 1024;

export interface SeedInput {
  /** cloud-init runs its per-instance modules once per instance id: change it to re-run them. */
  readonly instanceId: string;
  /** The guest's hostname (`local-hostname`). */
  readonly hostname: string;
  /** Passed verbatim (`#cloud-config`, a `#!` script, MIME multipart, ...). Empty: an empty document. */
  readonly userData: string;
  /** Extra meta-data keys, YAML or JSON. `instance-id` and `local-hostname` come from the fields above. */
  readonly metaData?: string;
  /** Network config v1 or v2, YAML. Absent: cloud-init's fallback (DHCP on the first NIC). */
  readonly networkConfig?: string;
}

/** The files of a seed, by their NoCloud names. */
export interface SeedFiles {
  readonly "meta-data": string;
  readonly "user-data": string;
  readonly "network-config"?: string;
}

/** A built seed image. */
export interface SeedIso {
  readonly path: string;
  readonly sizeBytes: number;
  /** sha256 of the image bytes, hex. */
  readonly sha256: string;
  /** The program that built it, e.g. `genisoimage`. */
  readonly tool: string;
  readonly files: readonly (keyof SeedFiles)[];
}

/** ISO builders in order of preference; all take mkisofs arguments (xorriso through `-as mkisofs`). */
const isoTools = ["genisoimage", "mkisofs", "xorriso"] as const;

const instanceIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const hostnameLabel = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Checks the input and renders the seed files. Pure: no file is touched. Throws INVALID_SPEC naming
 * every offending field (`instanceId`, `hostname`, `cloudInit.userData`, `cloudInit.metaData`,
 * `cloudInit.networkConfig`).
 */
export function renderSeedFiles(input: SeedInput): SeedFiles {
  const violations: FieldViolation[] = [];
  const bad = (path: string, reason: string) => violations.push({ path, reason });

  if (!instanceIdPattern.test(input.instanceId)) {
    bad("instanceId", "must be 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit");
  }
  if (input.hostname.length > 253 || !input.hostname.split(".").every((label) => hostnameLabel.test(label))) {
    bad("hostname", "must be a lowercase RFC 1123 host name, e.g. web-0");
  }

  const documents: [string, string | undefined][] = [
    ["cloudInit.userData", input.userData],
    ["cloudInit.metaData", input.metaData],
    ["cloudInit.networkConfig", input.networkConfig],
  ];
  let total = 0;
  let oversized = false;
  for (const [path, text] of documents) {
    if (text === undefined) continue;
    const bytes = Buffer.byteLength(text, "utf8");
    total += bytes;
    if (bytes > maxSeedDocumentBytes) {
      oversized = true;
      bad(path, `is ${bytes} bytes; at most ${maxSeedDocumentBytes} (256 KiB)`);
    }
    if (text.includes("\u0000")) bad(path, "must not contain NUL characters");
  }
  if (total > maxSeedTotalBytes && !oversized) {
    bad("cloudInit", `the documents add up to ${total} bytes; at most ${maxSeedTotalBytes} (256 KiB) together`);
  }

  if (/^#cloud-config\b/.test(input.userData)) {
    const error = yamlError(input.userData);
    if (error) bad("cloudInit.userData", `#cloud-config is not valid YAML: ${error}`);
  }
  let extraMeta: Record<string, unknown> = {};
  if (input.metaData?.trim()) {
    const parsed = yamlMapping(input.metaData);
    if (typeof parsed === "string") bad("cloudInit.metaData", parsed);
    else extraMeta = parsed;
  }
  if (input.networkConfig?.trim()) {
    const parsed = yamlMapping(input.networkConfig);
    if (typeof parsed === "string") bad("cloudInit.networkConfig", parsed);
    else {
      const network = (parsed.network as Record<string, unknown> | undefined) ?? parsed;
      if (network.version !== 1 && network.version !== 2) {
        bad("cloudInit.networkConfig", "must say version: 1 or version: 2 (cloud-init network config)");
      }
    }
  }
  if (violations.length > 0) throw invalid("INVALID_SPEC", violations, "cloud-init seed");

  // Ours last: the instance id decides whether cloud-init re-runs, so Persys owns it.
  const meta = { ...extraMeta, "instance-id": input.instanceId, "local-hostname": input.hostname };
  return {
    "meta-data": stringifyYaml(meta),
    "user-data": input.userData,
    ...(input.networkConfig?.trim() ? { "network-config": input.networkConfig } : {}),
  };
}

function yamlError(text: string): string | undefined {
  try {
    parseYaml(text);
    return undefined;
  } catch (error) {
    return (error as Error).message.split("\n")[0];
  }
}

/** The document as a YAML mapping, or why it is not one. */
function yamlMapping(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    return `is not valid YAML: ${(error as Error).message.split("\n")[0]}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "must be a YAML (or JSON) mapping";
  return value as Record<string, unknown>;
}

/** The ISO builder on this host; RUNTIME_UNAVAILABLE naming genisoimage when there is none. */
export function findSeedIsoTool(searchPath?: string): Promise<HostTool> {
  return findHostTool(isoTools, "genisoimage (or xorriso)", searchPath);
}

export interface BuildSeedIsoOptions {
  /** The ISO builder; default: the first of genisoimage, mkisofs, xorriso on PATH. */
  readonly tool?: HostTool;
  readonly timeoutMs?: number;
}

/**
 * Writes the seed image to `path` (atomically: built beside it and renamed over it, so a VM never
 * sees half an image). The image is world-readable, as libvirt's QEMU user must read it. Input
 * errors throw INVALID_SPEC before anything is written; a missing ISO tool throws
 * RUNTIME_UNAVAILABLE.
 */
export async function buildSeedIso(
  input: SeedInput,
  path: string,
  options: BuildSeedIsoOptions = {},
): Promise<SeedIso> {
  const files = renderSeedFiles(input);
  const tool = options.tool ?? (await findSeedIsoTool());
  const work = await mkdtemp(join(dirname(path), `.${basename(path)}.`));
  try {
    const names = Object.keys(files) as (keyof SeedFiles)[];
    for (const name of names) await writeFile(join(work, name), files[name] ?? "", { mode: 0o644 });
    const output = join(work, "seed.iso");
    const mkisofs = ["-output", output, "-volid", "cidata", "-joliet", "-rock", "-input-charset", "utf-8", "-quiet"];
    const args = tool.name === "xorriso" ? ["-as", "mkisofs", ...mkisofs, ...names] : [...mkisofs, ...names];
    await runHostTool(tool, args, { cwd: work, timeoutMs: options.timeoutMs ?? 30_000 });
    await chmod(output, 0o644);
    const bytes = await readFile(output);
    await rename(output, path);
    return {
      path,
      sizeBytes: (await stat(path)).size,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      tool: tool.name,
      files: names,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
