/**
 * The real Persys provider plugin (`provider/src/cmd/pulumi-resource-persys.ts`) packaged for
 * tests: a launcher that runs the TypeScript entry under tsx with the workspace's `development`
 * condition, so the plugin runs on the sources of `@persys/sdk` and `@persys/schema` without a build.
 */
import { join } from "node:path";
import { writePluginLauncher } from "../../../provider/src/plugin/plugin-launcher.js";
import { tsxNodeArgs } from "./provider-process.js";
import { repoRoot } from "./pulumi-cli.js";

/** Writes `<dir>/pulumi-resource-persys` and returns its path. */
export function writePersysPlugin(dir: string, env: Record<string, string> = {}): string {
  return writePluginLauncher({
    dir,
    entry: join(repoRoot, "provider/src/cmd/pulumi-resource-persys.ts"),
    nodeArgs: ["--conditions=development", ...tsxNodeArgs()],
    env,
  });
}
