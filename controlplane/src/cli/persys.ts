#!/usr/bin/env -S node --max-semi-space-size=64
import { homedir } from "node:os";
import { join } from "node:path";
import { configLeaves, PersysError } from "@persys/schema";
import { Command } from "commander";
import { loadServerConfig, serverConfigSchema } from "../config/server-config.js";
import { PERSYS_VERSION } from "../server/control-plane.js";
import { fail } from "./cli-failure.js";
import { DOCKER_SOCKET, defaultNodeId, dockerAnswers, type LocalAgent, startLocalAgent } from "./local-agent.js";
import { prepareLocalCredentials } from "./local-credentials.js";
import { registerPkiCommands } from "./pki-commands.js";
import { runServer } from "./run-server.js";

const program = new Command("persys")
  .description("Persys Compute control plane")
  .version(PERSYS_VERSION)
  .showHelpAfterError();

function stopOnSignals(close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(130);
    stopping = true;
    console.error(`\npersys: ${signal} received, shutting down (again to force)`);
    close().then(
      () => process.exit(0),
      (error) => fail(error),
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

interface UpOptions {
  dataDir: string;
  etcd?: string;
  redis?: string;
  grpc: string;
  http: string;
  nodeId?: string;
  agentGrpc: string;
  agentMetrics: string;
  dockerSocket: string;
  insecure?: boolean;
  context: boolean;
}

const server = program
  .command("server")
  .description("run a control-plane server (configured by file, PERSYS_* environment and flags)")
  .option("-c, --config <file>", "YAML or JSON configuration file")
  .addHelpText(
    "after",
    "\nExample:\n  persys server --state-kind etcd --state-endpoints http://10.0.0.1:2379 --listen-grpc 0.0.0.0:7070",
  );
for (const leaf of configLeaves(serverConfigSchema))
  server.option(`${leaf.flag} <value>`, `sets ${leaf.path} (env ${leaf.env})`);
server.action(async (options: Record<string, string>) => {
  try {
    const flags: Record<string, string> = {};
    for (const leaf of configLeaves(serverConfigSchema)) {
      const key = leaf.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      if (options[key] !== undefined) flags[leaf.flag.slice(2)] = options[key];
    }
    const config = loadServerConfig({ file: options.config, env: process.env, flags });
    const running = await runServer(config);
    console.log(`persys server listening: gRPC ${running.grpcAddress}, HTTP ${running.httpUrl}`);
    stopOnSignals(running.close);
  } catch (error) {
    fail(error);
  }
});

program
  .command("up")
  .description(
    "start a single-node cluster on loopback: control plane on embedded stores (or --etcd/--redis) and, when Docker answers, a node agent",
  )
  .option("--data-dir <dir>", "where the embedded stores keep their data", join(homedir(), ".persys", "data"))
  .option("--etcd <urls>", "use etcd at these comma-separated endpoints instead of the embedded state store")
  .option("--redis <url>", "use Redis at this URL instead of the embedded event store")
  .option("--grpc <address>", "gRPC listen address", "127.0.0.1:7070")
  .option("--http <address>", "HTTP listen address", "127.0.0.1:7080")
  .option("--node-id <id>", "name of the local node (default: the host name)")
  .option("--agent-grpc <address>", "where the local agent serves AgentService", "127.0.0.1:7071")
  .option("--agent-metrics <address>", "where the local agent serves /metrics and /healthz", "127.0.0.1:7072")
  .option("--docker-socket <path>", "the Docker daemon the local agent uses", DOCKER_SOCKET)
  .option("--insecure", "plaintext, and calls without credentials act as admin (development only)")
  .option("--no-context", "do not write the persys-up persysctl context")
  .addHelpText(
    "after",
    "\nExamples:\n  persys up\n  persys up --etcd http://127.0.0.1:2379 --redis redis://127.0.0.1:6379",
  )
  .action(async (options: UpOptions) => {
    try {
      const config = loadServerConfig({
        env: process.env,
        flags: {
          "data-dir": options.dataDir,
          "listen-grpc": options.grpc,
          "listen-http": options.http,
          ...(options.etcd ? { "state-kind": "etcd", "state-endpoints": options.etcd } : {}),
          ...(options.redis ? { "events-kind": "redis", "events-url": options.redis } : {}),
          "leader-ttl-seconds": "5",
          ...(options.insecure ? { insecure: "true" } : {}),
        },
      });
      const running = await runServer(config);
      await running.controlPlane.whenLeader();
      const nodeId = options.nodeId ?? defaultNodeId();
      const credentials = running.tls?.ca
        ? await prepareLocalCredentials({
            ca: running.tls.ca,
            tokens: running.controlPlane.tokens,
            dataDir: config.dataDir,
            nodeId,
            agentHosts: [
              "127.0.0.1",
              "localhost",
              options.agentGrpc.slice(0, options.agentGrpc.lastIndexOf(":")).replace(/^\[|\]$/g, ""),
            ],
            grpcAddress: running.grpcAddress,
            context: options.context,
          })
        : undefined;
      let agent: LocalAgent | undefined;
      let node: string;
      let stopping = false;
      if (await dockerAnswers(options.dockerSocket)) {
        agent = startLocalAgent({
          controlPlane: running.grpcAddress,
          dataDir: config.dataDir,
          listen: options.agentGrpc,
          metrics: options.agentMetrics,
          dockerSocket: options.dockerSocket,
          nodeId,
          insecure: !credentials,
          onExit: (code, signal) => {
            if (!stopping)
              console.error(`persys: the local agent exited (${signal ?? `code ${code}`}); the node goes NotReady`);
          },
        });
        node = `${agent.nodeId} (agent ${agent.endpoint}, Docker ${options.dockerSocket}, state in ${join(config.dataDir, "agent")})`;
      } else {
        node = "none";
        console.error(
          `persys: no Docker at ${options.dockerSocket}: the cluster has no node; start dockerd and run persys up again`,
        );
      }
      const close = async () => {
        stopping = true;
        await agent?.stop();
        await running.close();
      };
      const stores = `${config.state.kind === "etcd" ? `etcd ${config.state.endpoints.join(",")}` : `embedded state in ${config.dataDir}`}, ${
        config.events.kind === "redis" ? `Redis ${config.events.url}` : "embedded events"
      }`;
      const security = credentials
        ? [
            `  token:     ${credentials.adminToken}`,
            `  CA:        ${credentials.caFile}`,
            ...(credentials.context
              ? [`  context:   ${credentials.context.name} in ${credentials.context.file} (admin certificate)`]
              : []),
          ]
        : ["  security:  none (--insecure: plaintext, calls without credentials act as admin)"];
      const curl = credentials
        ? `curl -s --cacert ${credentials.caFile} -H "Authorization: Bearer ${credentials.adminToken}" ${running.httpUrl}/v1/cluster/summary`
        : `curl -s ${running.httpUrl}/v1/cluster/summary`;
      console.log(
        [
          "Persys single-node cluster is up.",
          `  gRPC API:  ${running.grpcAddress}`,
          `  REST API:  ${running.httpUrl}/v1   (OpenAPI: ${running.httpUrl}/v1/openapi.json)`,
          `  console:   ${running.httpUrl}/ui`,
          `  stores:    ${stores}`,
          `  node:      ${node}`,
          ...security,
          "",
          "Try:",
          `  ${curl}`,
          ...(credentials?.context ? ["  persysctl get nodes"] : []),
          "",
          "Ctrl-C stops it (containers keep running; the next persys up adopts them).",
        ].join("\n"),
      );
      stopOnSignals(close);
    } catch (error) {
      fail(error);
    }
  });

registerPkiCommands(program);

program.parseAsync().catch(fail);
