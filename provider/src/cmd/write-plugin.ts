#!/usr/bin/env node
/**
 * `node provider/dist/cmd/write-plugin.js <folder>`: writes the launcher `<folder>/pulumi-resource-persys`
 * for the built provider, so a project can name the folder in `plugins.providers` (see
 * examples/pulumi-stack) or `pulumi plugin install resource persys 0.1.0 -f <folder>` can install it.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writePluginLauncher } from "../plugin/plugin-launcher.js";

const folder = process.argv[2];
if (!folder) {
  process.stderr.write("usage: write-plugin <folder>\n");
  process.exit(2);
}
const entry = fileURLToPath(new URL("./pulumi-resource-persys.js", import.meta.url));
process.stdout.write(`${writePluginLauncher({ dir: resolve(folder), entry })}\n`);
