#!/usr/bin/env node
import { configLeaves, PersysError } from "@persys/schema";
import { Command } from "commander";
import { AGENT_ENV_PREFIX, agentConfigSchema, loadAgentConfig } from "../config/agent-config.js";
import { AGENT_VERSION } from "../control/node-report.js";
import { NodeAgent } from "../node-agent.js";

function fail(error: unknown): never {
  if (error instanceof PersysError) {
    console.error(`persys-agent: ${error.message}`);
    for (const d of error.details) console.error(`  ${d.path}: ${d.reason}`);
  } else console.error(`persys-agent: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
}

const leaves = configLeaves(agentConfigSchema, AGENT_ENV_PREFIX);
const program = new Command("persys-agent")
  .description("Persys node agent: runs the containers the control plane places on this node (Docker) and reports them")
  .version(AGENT_VERSION)
  .option("-c, --config <file>", "YAML or JSON configuration file")
  .showHelpAfterError()
  .addHelpText(
    "after",
    [
      "",
      "Every setting can come from the file, the environment or a flag (later wins).",
      "Examples:",
      "  persys-agent --node-id edge-1 --control-plane-endpoints 10.0.0.1:7070 --listen-grpc 0.0.0.0:7071",
      "  PERSYS_AGENT_NODE_LABELS=zone=a,rack=3 persys-agent --state-dir /var/lib/persys-agent",
    ].join("\n"),
  );
for (const leaf of leaves) program.option(`${leaf.flag} <value>`, `sets ${leaf.path} (env ${leaf.env})`);

program.action(async (options: Record<string, string>) => {
  try {
    const flags: Record<string, string> = {};
    for (const leaf of leaves) {
      const key = leaf.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      if (options[key] !== undefined) flags[leaf.flag.slice(2)] = options[key];
    }
    const config = loadAgentConfig({ file: options.config, env: process.env, flags });
    const agent = await NodeAgent.start(config);
    console.log(
      `persys-agent ${config.node.id}: AgentService ${agent.endpoint}, metrics ${agent.metricsUrl}, ` +
        `control plane ${config.controlPlane.endpoints.join(",")}`,
    );
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) process.exit(130);
      stopping = true;
      console.error(`persys-agent: ${signal} received, stopping (containers keep running)`);
      agent.close().then(
        () => process.exit(0),
        (error) => fail(error),
      );
    };
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
  } catch (error) {
    fail(error);
  }
});

program.parseAsync().catch(fail);
