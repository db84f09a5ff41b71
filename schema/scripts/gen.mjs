#!/usr/bin/env node
// Regenerates schema/src/gen from schema/proto: buf lint, then buf generate with the local ts-proto
// plugin (see buf.gen.yaml), then the JSON Schemas of the messages (gen-json-schema.mjs, into
// src/gen/json-schema). Stale output is removed first, so deleted protos leave nothing behind.
// The output is deterministic: running this twice gives byte-identical files (CI checks for drift).
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const schemaDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const buf = require.resolve("@bufbuild/buf/bin/buf");
const plugin = join(schemaDir, "..", "node_modules", ".bin", "protoc-gen-ts_proto");

if (!existsSync(plugin)) {
  fail(`ts-proto plugin not found at ${plugin}; run npm ci at the repository root`);
}

run("lint");
rmSync(join(schemaDir, "src", "gen"), { recursive: true, force: true });
run("generate");
runScript("gen-json-schema.mjs");

function run(...args) {
  const result = spawnSync(process.execPath, [buf, ...args], { cwd: schemaDir, stdio: "inherit" });
  if (result.status !== 0) fail(`buf ${args.join(" ")} failed`);
}

function runScript(name) {
  const result = spawnSync(process.execPath, [join(schemaDir, "scripts", name)], { cwd: schemaDir, stdio: "inherit" });
  if (result.status !== 0) fail(`${name} failed`);
}

function fail(message) {
  console.error(`gen: ${message}`);
  process.exit(1);
}
