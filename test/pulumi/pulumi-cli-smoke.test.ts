/**
 * Proves the Pulumi toolchain on this machine: the CLI built by scripts/build-pulumi-cli.sh runs,
 * keeps a stack in the local file backend, deploys a Node.js program with a stack output, reads the
 * output back and destroys the stack.
 *
 * The program is an Automation API inline program: `@pulumi/pulumi` from this workspace's
 * node_modules runs the program in this process and serves the language runtime itself, and the
 * CLI (`pulumi up --client=<addr>`) drives it. That path needs no `pulumi-language-nodejs`, which
 * cannot be built here (its module is not served by the Go module proxy; see docs/pulumi.md).
 * Everything else — engine, backend, snapshots, secrets, plugins — is the real CLI's.
 */
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPulumiSandbox,
  PULUMI_VERSION,
  type PulumiCli,
  type PulumiSandbox,
  requirePulumiCli,
  pulumi as runPulumi,
  writeProject,
} from "./support/pulumi-cli.js";

const PROJECT = "persys-smoke";

describe("pulumi CLI smoke", () => {
  let cli: PulumiCli;
  let sandbox: PulumiSandbox;
  let projectDir: string;
  let stack: Stack;

  beforeAll(async () => {
    cli = await requirePulumiCli();
    sandbox = createPulumiSandbox(cli);
    projectDir = join(sandbox.dir, "smoke");
    writeProject(projectDir, PROJECT, "description: Persys Pulumi toolchain smoke test\n");
  });

  afterAll(() => sandbox?.cleanup());

  it("runs the pinned CLI version", async () => {
    const { stdout } = await runPulumi(cli, sandbox, ["version"], { cwd: sandbox.dir });
    expect(stdout.trim()).toBe(PULUMI_VERSION);
  });

  it("creates a stack in the local backend", async () => {
    await runPulumi(cli, sandbox, ["stack", "init", "dev"], { cwd: projectDir });
    const { stdout } = await runPulumi(cli, sandbox, ["stack", "ls", "--json"], { cwd: projectDir });
    expect(JSON.parse(stdout)).toEqual([expect.objectContaining({ name: "dev", current: true })]);
  });

  it("deploys a Node.js program with stack outputs (pulumi up)", async () => {
    const program = async () => {
      const greeting = pulumi.output("hello from persys");
      return { greeting, token: pulumi.secret("s3cr3t"), stack: pulumi.getStack() };
    };
    stack = await LocalWorkspace.selectStack(
      { stackName: "dev", projectName: PROJECT, program },
      { workDir: projectDir, envVars: sandbox.env, pulumiCommand: cli.command },
    );
    const result = await stack.up();
    expect(result.summary.result).toBe("succeeded");
    expect(result.summary.resourceChanges).toEqual({ create: 1 }); // the Stack resource
    expect(result.outputs.greeting).toEqual({ value: "hello from persys", secret: false });
    expect(result.outputs.token).toEqual({ value: "s3cr3t", secret: true });
    expect(result.outputs.stack?.value).toBe("dev");
  });

  it("reads the outputs back with pulumi stack output", async () => {
    const plain = await runPulumi(cli, sandbox, ["stack", "output", "greeting"], { cwd: projectDir });
    expect(plain.stdout.trim()).toBe("hello from persys");
    const all = await runPulumi(cli, sandbox, ["stack", "output", "--json", "--show-secrets"], { cwd: projectDir });
    expect(JSON.parse(all.stdout)).toEqual({ greeting: "hello from persys", token: "s3cr3t", stack: "dev" });
    const hidden = await runPulumi(cli, sandbox, ["stack", "output", "--json"], { cwd: projectDir });
    expect(JSON.parse(hidden.stdout).token).toBe("[secret]");
  });

  it("destroys the stack with pulumi destroy --yes and removes it", async () => {
    const destroyed = await runPulumi(cli, sandbox, ["destroy", "--yes", "--skip-preview"], { cwd: projectDir });
    expect(destroyed.stdout).toMatch(/Resources:\s*\n\s*- 1 deleted/);
    const outputs = await runPulumi(cli, sandbox, ["stack", "output", "--json"], { cwd: projectDir });
    expect(JSON.parse(outputs.stdout)).toEqual({});
    await runPulumi(cli, sandbox, ["stack", "rm", "--yes", "dev"], { cwd: projectDir });
    const { stdout } = await runPulumi(cli, sandbox, ["stack", "ls", "--json"], { cwd: projectDir });
    expect(JSON.parse(stdout)).toEqual([]);
  });
});
