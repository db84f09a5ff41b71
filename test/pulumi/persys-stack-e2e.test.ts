/**
 * End to end with the real Pulumi CLI and language host against `persys up` (real control plane,
 * real agent, real Docker): the example program `examples/pulumi-stack` (its container; the
 * Compose stack and VM are switched off by config, they are covered at protocol level) goes through
 * up → running → env change updates in place → out-of-band delete → refresh notices → up recreates
 * → import of an existing workload → preview shows no changes → destroy leaves nothing in Persys or
 * Docker. Local file backend in a temp dir, passphrase secrets, no update checks or plugin downloads.
 *
 * Needs `pulumi/dist` built (scripts/test.sh builds; the program imports `@persys/pulumi` as a user
 * would) and `agent/dist` (persys up starts the agent from it); the provider runs from its sources.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { container, PersysClient } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../agent/support/agent-harness.js";
import {
  cleanupDocker,
  containersOf,
  docker,
  httpText,
  requireDocker,
  testId,
  workloadContainers,
} from "../agent/support/docker-fixtures.js";
import { freePort } from "../support/free-port.js";
import { type LaunchedPersysUp, launchPersysUp, testClusterFlags } from "../support/persys-up.js";
import { runDir } from "../support/services.js";
import { writePersysPlugin } from "./support/persys-plugin.js";
import {
  createPulumiSandbox,
  type PulumiCli,
  type PulumiSandbox,
  repoRoot,
  requirePulumiCli,
  pulumi as runPulumi,
  writeProject,
} from "./support/pulumi-cli.js";

const STEP_MS = 180_000;

describe("pulumi with Persys resources against persys up (real agent and Docker)", () => {
  const id = testId();
  const nodeId = `pe2e-${id}`;
  let cli: PulumiCli;
  let sandbox: PulumiSandbox;
  let project: string;
  let persysUp: LaunchedPersysUp | undefined;
  let client: PersysClient;
  let webId = "";
  let revision = "";
  const adoptId = `adopt-${id}`;

  const cliRun = (args: string[], allowFailure = false) =>
    runPulumi(cli, sandbox, args, { cwd: project, allowFailure, timeoutMs: STEP_MS });
  const outputs = async () => JSON.parse((await cliRun(["stack", "output", "--json"])).stdout);
  const containerEnv = async (workloadId: string) => {
    const [c] = await workloadContainers(nodeId, workloadId);
    if (!c) return undefined;
    return (await docker.getContainer(c.Id).inspect()).Config.Env;
  };

  beforeAll(async () => {
    cli = await requirePulumiCli();
    await requireDocker();
    const hostPort = await freePort();
    // persys up: a temp data dir, non-default ports, its own node id; it serves TLS and writes a
    // persysctl context (admin certificate) that the SDK and the provider discover, as for a user.
    const dataDir = mkdtempSync(join(runDir(), "pulumi-e2e-"));
    const clientConfig = join(dataDir, "client.yaml");
    const cluster = await testClusterFlags(dataDir, nodeId);
    persysUp = await launchPersysUp({
      args: cluster.args,
      env: { PERSYS_CONFIG: clientConfig },
      needs: ["pulumi/dist/index.js", "agent/dist/cli/persys-agent.js"],
    });
    client = PersysClient.fromEnvironment({ env: { PERSYS_CONFIG: clientConfig } });
    await until(
      "the persys up node is ready",
      async () => (await client.nodes.get(nodeId).catch(() => undefined))?.state === 1,
      90_000,
    ).catch((error) => {
      throw new Error(`${(error as Error).message}\n${persysUp?.output()}`);
    });

    // The project: the example's Pulumi.yaml settings, its program compiled into bin/, the plugin folder.
    sandbox = createPulumiSandbox(cli, { PERSYS_CONFIG: clientConfig });
    project = join(sandbox.dir, "pulumi-stack");
    const pluginDir = join(sandbox.dir, "plugin");
    writePersysPlugin(pluginDir);
    writeProject(
      project,
      "persys-stack",
      `main: bin/index.js\nplugins:\n  providers:\n    - name: persys\n      path: ${pluginDir}\n`,
    );
    execFileSync(process.execPath, [
      join(repoRoot, "node_modules/typescript/bin/tsc"),
      "-p",
      join(repoRoot, "examples/pulumi-stack"),
      "--outDir",
      join(project, "bin"),
    ]);
    execFileSync("cp", [join(repoRoot, "examples/pulumi-stack/package.json"), project]);
    symlinkSync(join(repoRoot, "node_modules"), join(project, "node_modules"), "dir");
    await cliRun(["stack", "init", "dev"]);
    for (const [key, value] of [
      ["persys:endpoint", `127.0.0.1:${cluster.ports.grpc}`],
      ["compose", "false"],
      ["vm", "false"],
      ["hostPort", String(hostPort)],
      ["greeting", "hello"],
    ]) {
      await cliRun(["config", "set", key!, value!]);
    }
  }, 240_000);

  afterAll(async () => {
    client?.close();
    await persysUp?.stop();
    await cleanupDocker([nodeId]);
    sandbox?.cleanup();
  }, 60_000);

  it(
    "pulumi preview shows where the container would be placed and creates nothing",
    async () => {
      const { stdout } = await cliRun(["preview"]);
      expect(stdout).toMatch(/\+\s+persys:index:Container\s+web\s+create/);
      expect(stdout).toContain(`replica 0 → ${nodeId} (create)`);
      expect(await client.workloads.list().toArray()).toEqual([]);
    },
    STEP_MS,
  );

  it(
    "pulumi up creates the container and returns once it runs",
    async () => {
      const { stdout } = await cliRun(["up", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/\+\s+persys:index:Container\s+web\s+created/);
      const out = await outputs();
      expect(out).toMatchObject({
        webStatus: "running",
        webNode: nodeId,
        webId: expect.stringMatching(/^web-[0-9a-f]{7}$/),
      });
      webId = out.webId;
      revision = out.webRevision;
      expect(await until("the container answers", () => httpText(out.webUrl), 20_000)).toBe("persys web ok\n");
      expect(await containerEnv(webId)).toContain("GREETING=hello");
    },
    STEP_MS,
  );

  it(
    "a changed env var updates the container in place (no replace)",
    async () => {
      await cliRun(["config", "set", "greeting", "changed"]);
      const { stdout } = await cliRun(["up", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/~\s+persys:index:Container\s+web\s+updated/);
      expect(stdout).not.toMatch(/replace/);
      const out = await outputs();
      expect(out.webId).toBe(webId);
      expect(out.webRevision).not.toBe(revision);
      expect(await containerEnv(webId)).toContain("GREETING=changed");
    },
    STEP_MS,
  );

  it(
    "pulumi refresh notices a deletion out of band, and pulumi up recreates the container",
    async () => {
      await client.workloads.delete(webId);
      await client.workloads.waitFor(webId, "deleted", { timeoutMs: 60_000 });
      const refreshed = await cliRun(["refresh", "--yes", "--skip-preview"]);
      expect(refreshed.stdout).toMatch(/-\s+persys:index:Container\s+web\s+deleted/);
      const up = await cliRun(["up", "--yes", "--skip-preview"]);
      expect(up.stdout).toMatch(/\+\s+persys:index:Container\s+web\s+created/);
      // Refresh dropped it from the state, so the new workload gets a new generated name.
      const out = await outputs();
      expect(out.webStatus).toBe("running");
      expect(out.webId).not.toBe(webId);
      webId = out.webId;
      expect(await workloadContainers(nodeId, webId)).toHaveLength(1);
    },
    STEP_MS,
  );

  it(
    "pulumi import adopts an existing workload; preview then shows no changes",
    async () => {
      await client.workloads.apply(
        container({ id: adoptId, image: "persys-test/busybox:1", command: ["sleep", "3600"] }),
      );
      await client.workloads.waitFor(adoptId, "running", { timeoutMs: 60_000 });
      const imported = await cliRun([
        "import",
        "persys:index:Container",
        "adopted",
        adoptId,
        "--yes",
        "--protect=false",
        "--generate-code=false",
      ]);
      expect(imported.stdout).toMatch(/=\s+persys:index:Container\s+adopted\s+imported/);
      await cliRun(["config", "set", "adopt", adoptId]);
      const preview = await cliRun(["preview", "--expect-no-changes"]);
      expect(preview.stdout).not.toMatch(/persys:index:Container\s+adopted\s+(update|replace|create)/);
    },
    STEP_MS,
  );

  it(
    "pulumi destroy leaves nothing in Persys or Docker",
    async () => {
      const { stdout } = await cliRun(["destroy", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/-\s+persys:index:Container\s+web\s+deleted/);
      expect(stdout).toMatch(/-\s+persys:index:Container\s+adopted\s+deleted/);
      expect(await client.workloads.list().toArray()).toEqual([]);
      // The agent removes a deleted replica's container right after the control plane drops the workload.
      const destroyed = Date.now();
      const left = await until(
        "Docker has no container of the node left",
        async () => {
          const containers = await containersOf(nodeId);
          return containers.length === 0 ? [] : undefined;
        },
        30_000,
      ).catch(async (error) => {
        const containers = await containersOf(nodeId);
        throw new Error(`${(error as Error).message}: ${JSON.stringify(containers.map((c) => [c.Labels, c.State]))}`);
      });
      expect(left).toEqual([]);
      console.log(`containers gone ${Date.now() - destroyed} ms after destroy returned`);
    },
    STEP_MS,
  );
});
