/**
 * Serving a resource provider as a Pulumi plugin process.
 *
 * The Pulumi engine starts a provider plugin as an executable (`pulumi-resource-<name>`, see
 * `plugin-launcher.ts`) with the engine's gRPC address as its first argument, reads the port of
 * the plugin's `pulumirpc.ResourceProvider` server from the first line of its stdout, and then
 * calls GetPluginInfo, Configure, Check, Diff, Create, Read, Update and Delete on it.
 * `@pulumi/pulumi/provider`'s `main` implements that protocol over a {@link Provider}; this module
 * is the one place the plugin process calls it.
 *
 * ```ts
 * import { serveProviderPlugin } from "./plugin/serve.js";
 * await serveProviderPlugin({ version: "0.1.0", create: async (urn, inputs) => ({ id: "x", outs: inputs }) });
 * ```
 */
import { main, type Provider } from "@pulumi/pulumi/provider/index.js";

/** A provider that can be served: the engine requires a version from GetPluginInfo. */
export type ProviderPlugin = Provider & { readonly version: string };

/**
 * Serves `provider` on 127.0.0.1 (an ephemeral port) and prints the port as the first line of
 * stdout, as the engine expects. Resolves once the server listens; the gRPC server then keeps the
 * process alive until the engine kills it. Nothing may write to stdout before this resolves, or the
 * engine reads that as the port. `argv` is what the engine passed: the engine address first
 * (optional; without it logs go to stderr) and flags such as `--logtostderr`, `-v=N`, `--tracing`.
 *
 * On a startup failure (no port could be bound) the process exits with status 1 after writing the
 * error to stderr, so the engine reports a plugin that failed to start rather than waiting.
 */
export async function serveProviderPlugin(
  provider: ProviderPlugin,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  if (!/^\d+\.\d+\.\d+/.test(provider.version)) {
    throw new TypeError(
      `provider version must be semver (the engine parses it), got ${JSON.stringify(provider.version)}`,
    );
  }
  try {
    await main(provider, [...argv]);
  } catch (err) {
    process.stderr.write(
      `provider plugin failed to start: ${err instanceof Error ? (err.stack ?? err.message) : err}\n`,
    );
    process.exit(1);
  }
}
