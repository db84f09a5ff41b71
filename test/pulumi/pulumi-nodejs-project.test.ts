/**
 * A plain `runtime: nodejs` project deployed by the real CLI the way users run it — `pulumi up` in
 * the project folder, no Automation API — through the Node.js language host `pulumi-language-nodejs`
 * that scripts/build-pulumi-cli.sh builds beside the CLI (from github.com/pulumi/pulumi/sdk/v3
 * v3.68.0, the newest served module that contains it; see docs/pulumi.md).
 *
 * The host runs `@pulumi/pulumi/cmd/run` (3.248.0 from this workspace) with Node, resolving it from
 * the project folder, so each project folder gets a `node_modules` symlink to the workspace's.
 * Covered: a JavaScript program with config, a plain and a secret stack output (`up`, `stack
 * output`, `preview` with no changes, `destroy`); a program whose resource comes from the probe
 * provider plugin; a TypeScript program (the host always sets PULUMI_NODEJS_TYPESCRIPT=true, so
 * `@pulumi/pulumi` compiles it with the workspace's `typescript` and its vendored ts-node); and one
 * documented gap of the 2023 host — RPCs newer than it (here RegisterResourceHook) fail.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROBE_TYPE, readProbeFile } from "./fixtures/probe-provider.js";
import { writeProbePlugin } from "./support/provider-process.js";
import {
  createPulumiSandbox,
  type PulumiCli,
  type PulumiSandbox,
  repoRoot,
  requirePulumiCli,
  pulumi as runPulumi,
  writeProject,
} from "./support/pulumi-cli.js";

const TIMEOUT_MS = 110_000;

/**
 * Writes a project folder: Pulumi.yaml (`runtime: nodejs` plus `yaml`), a package.json naming the
 * entry module (CommonJS, whatever the enclosing folders say), the program files, and the
 * node_modules symlink through which the host and the program find `@pulumi/pulumi`.
 */
function writeNodeProject(dir: string, name: string, files: Record<string, string>, yaml = ""): void {
  writeProject(dir, name, yaml);
  const main = Object.keys(files).find((f) => f.startsWith("index.")) ?? "index.js";
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name, private: true, type: "commonjs", main })}\n`);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
}

const JS_PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");
const config = new pulumi.Config();
exports.greeting = "hello " + config.require("who") + " from " + pulumi.getProject() + "/" + pulumi.getStack();
exports.token = pulumi.secret(config.requireSecret("token"));
exports.node = process.version;
`;

describe("pulumi up of a runtime: nodejs project (pulumi-language-nodejs)", () => {
  let cli: PulumiCli;
  let sandbox: PulumiSandbox;

  const cliIn = (cwd: string, args: string[], allowFailure = false) =>
    runPulumi(cli, sandbox, args, { cwd, allowFailure, timeoutMs: TIMEOUT_MS });

  beforeAll(async () => {
    cli = await requirePulumiCli();
    // The CLI looks for its language hosts next to its own executable (PULUMI_IGNORE_AMBIENT_PLUGINS is set).
    const host = join(dirname(cli.bin), "pulumi-language-nodejs");
    if (!existsSync(host)) {
      throw new Error(`${host} is missing; build it beside the CLI: scripts/build-pulumi-cli.sh`);
    }
    sandbox = createPulumiSandbox(cli);
  });

  afterAll(() => sandbox?.cleanup());

  describe("a JavaScript program", () => {
    let dir: string;
    beforeAll(async () => {
      dir = join(sandbox.dir, "js");
      writeNodeProject(dir, "persys-js", { "index.js": JS_PROGRAM });
      await cliIn(dir, ["stack", "init", "dev"]);
      await cliIn(dir, ["config", "set", "who", "persys"]);
      await cliIn(dir, ["config", "set", "--secret", "token", "s3cr3t"]);
    });

    it("pulumi up previews and deploys it", async () => {
      const { stdout } = await cliIn(dir, ["up", "--yes"]);
      expect(stdout).toMatch(/Previewing update \(dev\)/);
      expect(stdout).toMatch(/\+\s+pulumi:pulumi:Stack\s+persys-js-dev\s+created/);
      expect(stdout).toMatch(/greeting\s*:\s*"hello persys from persys-js\/dev"/);
      expect(stdout).toMatch(/token\s*:\s*\[secret\]/);
      expect(stdout).not.toContain("s3cr3t");
    });

    it("pulumi stack output reads the outputs back", async () => {
      expect((await cliIn(dir, ["stack", "output", "greeting"])).stdout.trim()).toBe("hello persys from persys-js/dev");
      expect((await cliIn(dir, ["stack", "output", "token"])).stdout.trim()).toBe("[secret]");
      const all = JSON.parse((await cliIn(dir, ["stack", "output", "--json", "--show-secrets"])).stdout);
      expect(all).toEqual({
        greeting: "hello persys from persys-js/dev",
        token: "s3cr3t",
        node: expect.stringMatching(/^v\d+\./),
      });
    });

    it("pulumi preview of the unchanged program shows no changes", async () => {
      const { stdout } = await cliIn(dir, ["preview", "--expect-no-changes"]);
      expect(stdout).toMatch(/1 unchanged/);
    });

    it("a failing program fails the update with its error", async () => {
      writeFileSync(join(dir, "index.js"), `${JS_PROGRAM}throw new Error("persys: program failed on purpose");\n`);
      // Without a shorter stack, reporting the error costs 35-110 s of CPU: Node 20.20's util.inspect
      // with colours never finishes a frame at node_modules/@pulumi/resource.ts, a path that
      // @pulumi/pulumi's source maps produce (docs/pulumi.md, "Gaps of the language host").
      sandbox.env.NODE_OPTIONS = "--stack-trace-limit=8";
      const failed = await cliIn(dir, ["up", "--yes", "--skip-preview"], true).finally(() => {
        delete sandbox.env.NODE_OPTIONS;
      });
      writeFileSync(join(dir, "index.js"), JS_PROGRAM);
      expect(failed.code).not.toBe(0);
      expect(failed.stdout).toContain("persys: program failed on purpose");
    });

    it("pulumi destroy removes the stack's resources", async () => {
      const { stdout } = await cliIn(dir, ["destroy", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/-\s+pulumi:pulumi:Stack\s+persys-js-dev\s+deleted/);
      const state = JSON.parse((await cliIn(dir, ["stack", "export"])).stdout);
      expect(state.deployment.resources ?? []).toEqual([]);
      await cliIn(dir, ["stack", "rm", "--yes", "dev"]);
    });
  });

  it("deploys a resource of a provider plugin and destroys it", async () => {
    const dir = join(sandbox.dir, "probe");
    const pluginDir = join(sandbox.dir, "plugin");
    const statePath = join(sandbox.dir, "probes.json");
    sandbox.env.PERSYS_PROBE_STATE = statePath;
    writeProbePlugin(pluginDir);
    const program = `"use strict";
const pulumi = require("@pulumi/pulumi");
const probe = new pulumi.CustomResource(${JSON.stringify(PROBE_TYPE)}, "probe",
  { message: new pulumi.Config().require("message"), length: undefined, revision: undefined });
exports.id = probe.id;
exports.length = probe.length;
`;
    writeNodeProject(
      dir,
      "persys-probe-js",
      { "index.js": program },
      `plugins:\n  providers:\n    - name: persys\n      path: ${pluginDir}\n`,
    );
    await cliIn(dir, ["stack", "init", "dev"]);
    await cliIn(dir, ["config", "set", "message", "from a nodejs project"]);
    const up = await cliIn(dir, ["up", "--yes", "--skip-preview"]);
    expect(up.stdout).toMatch(/\+\s+persys:index:Probe\s+probe\s+created/);
    const outputs = JSON.parse((await cliIn(dir, ["stack", "output", "--json"])).stdout);
    expect(outputs.length).toBe("from a nodejs project".length);
    expect(readProbeFile(statePath)).toEqual({ [outputs.id]: { message: "from a nodejs project", revision: 1 } });
    const destroyed = await cliIn(dir, ["destroy", "--yes", "--skip-preview"]);
    expect(destroyed.stdout).toMatch(/-\s+persys:index:Probe\s+probe\s+deleted/);
    expect(readProbeFile(statePath)).toEqual({});
  });

  it("deploys a TypeScript program (compiled by @pulumi/pulumi's ts-node at run time)", async () => {
    const dir = join(sandbox.dir, "ts");
    mkdirSync(dir);
    const program = `import * as pulumi from "@pulumi/pulumi";
const who: string = new pulumi.Config().get("who") ?? "world";
export const greeting: string = \`hello \${who}\`;
export const answer: pulumi.Output<number> = pulumi.output(41).apply((n: number) => n + 1);
`;
    writeNodeProject(dir, "persys-ts", { "index.ts": program });
    await cliIn(dir, ["stack", "init", "dev"]);
    await cliIn(dir, ["up", "--yes", "--skip-preview"]);
    const outputs = JSON.parse((await cliIn(dir, ["stack", "output", "--json"])).stdout);
    expect(outputs).toEqual({ greeting: "hello world", answer: 42 });
    await cliIn(dir, ["destroy", "--yes", "--skip-preview"]);
  });

  it("known gap of the v3.68.0 host: monitor RPCs newer than it are unimplemented (resource hooks)", async () => {
    // The host proxies the resource monitor and forwards only the RPCs of 2023; docs/pulumi.md
    // lists them. When this starts passing the other way, the host was replaced: update the docs.
    const dir = join(sandbox.dir, "hook");
    const program = `"use strict";
const pulumi = require("@pulumi/pulumi");
const hook = new pulumi.ResourceHook("noop", () => {});
new pulumi.ComponentResource("persys:test:Group", "group", {}, { hooks: { afterCreate: [hook] } });
`;
    writeNodeProject(dir, "persys-hook", { "index.js": program });
    await cliIn(dir, ["stack", "init", "dev"]);
    const failed = await cliIn(dir, ["up", "--yes", "--skip-preview"], true);
    expect(failed.code).not.toBe(0);
    expect(failed.stdout).toContain("unknown method RegisterResourceHook for service pulumirpc.ResourceMonitor");
  });
});
