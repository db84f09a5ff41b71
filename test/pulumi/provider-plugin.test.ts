/**
 * Proves the real Pulumi CLI loads a TypeScript provider plugin from a local folder and drives its
 * lifecycle: the project's Pulumi.yaml names the folder under `plugins.providers` (`path:`), the
 * folder holds the `pulumi-resource-persys` launcher (writePluginLauncher), and a program declares
 * a `persys:index:Probe` through a plain `pulumi.CustomResource`. Create, update on a changed input,
 * refresh healing out-of-band drift and deletion, check failures shown to the user, destroy.
 *
 * `pulumi up` runs the program as an Automation API inline program (no Node.js language host can be
 * built here; see pulumi-cli-smoke.test.ts); refresh and destroy are plain CLI commands.
 */
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROBE_TYPE, readProbeFile, writeProbeFile } from "./fixtures/probe-provider.js";
import { writeProbePlugin } from "./support/provider-process.js";
import {
  createPulumiSandbox,
  type PulumiCli,
  type PulumiSandbox,
  requirePulumiCli,
  pulumi as runPulumi,
  writeProject,
} from "./support/pulumi-cli.js";

/** A generic custom resource of the probe type; output fields are declared so they are read back. */
class Probe extends pulumi.CustomResource {
  declare readonly message: pulumi.Output<string>;
  declare readonly length: pulumi.Output<number>;
  declare readonly revision: pulumi.Output<number>;
  constructor(name: string, args: { message: pulumi.Input<string> }, opts?: pulumi.CustomResourceOptions) {
    super(PROBE_TYPE, name, { ...args, length: undefined, revision: undefined }, opts);
  }
}

interface StateResource {
  type: string;
  id?: string;
  outputs?: Record<string, unknown>;
}

const PROJECT = "persys-probe";

describe("persys provider plugin loaded by the Pulumi CLI", () => {
  let cli: PulumiCli;
  let sandbox: PulumiSandbox;
  let projectDir: string;
  let statePath: string;
  let stack: Stack;
  let message = "first";

  const cliIn = (args: string[], allowFailure = false) =>
    runPulumi(cli, sandbox, args, { cwd: projectDir, allowFailure, timeoutMs: 110_000 });

  async function probesInState(): Promise<StateResource[]> {
    const { stdout } = await cliIn(["stack", "export"]);
    const resources: StateResource[] = JSON.parse(stdout).deployment.resources ?? [];
    return resources.filter((r) => r.type === PROBE_TYPE);
  }

  beforeAll(async () => {
    cli = await requirePulumiCli();
    sandbox = createPulumiSandbox(cli);
    statePath = join(sandbox.dir, "probes.json");
    sandbox.env.PERSYS_PROBE_STATE = statePath;
    const pluginDir = join(sandbox.dir, "plugin");
    writeProbePlugin(pluginDir);
    projectDir = join(sandbox.dir, "probe-project");
    writeProject(projectDir, PROJECT, `plugins:\n  providers:\n    - name: persys\n      path: ${pluginDir}\n`);
    await cliIn(["stack", "init", "dev"]);
    const program = async () => {
      const probe = new Probe("probe", { message });
      return { id: probe.id, message: probe.message, length: probe.length, revision: probe.revision };
    };
    stack = await LocalWorkspace.selectStack(
      { stackName: "dev", projectName: PROJECT, program },
      { workDir: projectDir, envVars: sandbox.env, pulumiCommand: cli.command },
    );
  });

  afterAll(() => sandbox?.cleanup());

  it("pulumi up creates the probe through the plugin", async () => {
    const result = await stack.up();
    expect(result.summary.resourceChanges).toEqual({ create: 2 }); // the stack and the probe (provider resources are not counted)
    expect(result.stdout).toMatch(/\+\s+persys:index:Probe\s+probe\s+created/);
    expect(result.outputs.message?.value).toBe("first");
    expect(result.outputs.length?.value).toBe(5);
    expect(result.outputs.revision?.value).toBe(1);
    const id = String(result.outputs.id?.value);
    expect(readProbeFile(statePath)).toEqual({ [id]: { message: "first", revision: 1 } });
    const { stdout } = await cliIn(["stack", "export"]);
    const providers = JSON.parse(stdout).deployment.resources.filter(
      (r: StateResource) => r.type === "pulumi:providers:persys",
    );
    expect(providers).toHaveLength(1);
  });

  it("pulumi up with a changed input updates it in place", async () => {
    message = "second";
    const result = await stack.up();
    expect(result.summary.resourceChanges).toEqual({ same: 1, update: 1 });
    expect(result.stdout).toMatch(/~\s+persys:index:Probe\s+probe\s+updated/);
    expect(result.outputs.revision?.value).toBe(2);
    expect(Object.values(readProbeFile(statePath))).toEqual([{ message: "second", revision: 2 }]);
  });

  it("pulumi preview of an unchanged program shows no changes", async () => {
    const preview = await stack.preview();
    expect(preview.changeSummary).toEqual({ same: 2 });
  });

  it("pulumi refresh takes in drift made outside Pulumi, and the next up reverts it", async () => {
    const [id] = Object.keys(readProbeFile(statePath));
    writeProbeFile(statePath, { [id!]: { message: "drifted", revision: 7 } });
    const refreshed = await cliIn(["refresh", "--yes", "--skip-preview"]);
    expect(refreshed.stdout).toMatch(/~\s+persys:index:Probe\s+probe\s+updated/);
    expect((await probesInState())[0]?.outputs).toEqual({ message: "drifted", length: 7, revision: 7 });
    const result = await stack.up();
    expect(result.summary.resourceChanges).toEqual({ same: 1, update: 1 });
    expect(readProbeFile(statePath)[id!]).toEqual({ message: "second", revision: 8 });
  });

  it("pulumi refresh drops a probe deleted outside Pulumi, and the next up recreates it", async () => {
    writeProbeFile(statePath, {});
    const refreshed = await cliIn(["refresh", "--yes", "--skip-preview"]);
    expect(refreshed.stdout).toMatch(/-\s+persys:index:Probe\s+probe\s+deleted/);
    expect(await probesInState()).toEqual([]);
    const result = await stack.up();
    expect(result.summary.resourceChanges).toEqual({ same: 1, create: 1 });
    expect(Object.values(readProbeFile(statePath))).toEqual([{ message: "second", revision: 1 }]);
  });

  it("shows check failures to the user and changes nothing", async () => {
    const before = readProbeFile(statePath);
    message = "";
    const err = await stack.up().catch((e: unknown) => e);
    message = "second";
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain("message must be a non-empty string");
    expect(readProbeFile(statePath)).toEqual(before);
  });

  it("pulumi destroy deletes the probe through the plugin", async () => {
    const destroyed = await cliIn(["destroy", "--yes", "--skip-preview"]);
    expect(destroyed.stdout).toMatch(/-\s+persys:index:Probe\s+probe\s+deleted/);
    expect(readProbeFile(statePath)).toEqual({});
    expect(await probesInState()).toEqual([]);
  });
});
