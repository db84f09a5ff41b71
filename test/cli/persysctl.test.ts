/**
 * `persysctl` as a user runs it: the built binary against a real control plane (in process,
 * embedded stores) with simulated nodes. Reads stdout and exit codes; table views are golden files.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SdkCluster, scratchDir, simNode, startSdkCluster } from "../sdk/sdk-cluster.js";
import { buildCli, expectGolden, normalise, persysctl, persysctlLive } from "./cli-harness.js";

let cluster: SdkCluster;
let dir: string;
let env: Record<string, string>;

const spec = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const run = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  persysctl(args, { ...options, env: { ...env, ...options.env } });

beforeAll(async () => {
  await buildCli();
  cluster = await startSdkCluster([simNode("n1"), simNode("n2", { labels: { zone: "b" } })]);
  dir = scratchDir("cli-");
  env = { PERSYS_ENDPOINT: cluster.endpoint, PERSYS_CONFIG: join(dir, "config.yaml") };
}, 240_000);
afterAll(async () => {
  await cluster?.close();
});

const webYaml = `id: web
kind: container
replicas: 2
labels: { app: web }
resources: { cpuMillicores: 250, memoryMib: 256 }
container:
  image: nginx:1.27
  ports:
    - containerPort: 80
      hostPort: 8080
`;

describe("apply, get, describe, explain", () => {
  it("applies with --wait, showing each replica's progress, and ends with the result", async () => {
    const result = await run(["apply", "-f", spec("web.yaml", webYaml), "--wait"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("workload/web created");
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^web\[0\] running on n[12]$/),
        expect.stringMatching(/^web\[1\] running on n[12]$/),
      ]),
    );
    expect(lines.at(-1)).toMatch(/^workload\/web running \(2\/2 ready\) after \d+\.\ds$/);
  });

  it("says unchanged for the same spec, and prints the stored workloads with -o json", async () => {
    const again = await run(["apply", "-f", join(dir, "web.yaml")]);
    expect([again.code, again.stdout]).toEqual([0, "workload/web unchanged\n"]);
    const json = await run(["apply", "-f", join(dir, "web.yaml"), "-o", "json"]);
    const applied = JSON.parse(json.stdout);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ id: "web", status: { state: "WORKLOAD_STATE_RUNNING", readyReplicas: 2 } });
  });

  it("lists workloads and nodes as tables", async () => {
    const workloads = await run(["get", "workloads"]);
    expect(workloads.code).toBe(0);
    expectGolden("get-workloads", normalise(workloads.stdout));
    expectGolden("get-workloads-wide", normalise((await run(["get", "wl", "-o", "wide"])).stdout));
    expectGolden("get-nodes", normalise((await run(["get", "nodes"])).stdout));
    expect((await run(["get", "workloads", "-o", "name"])).stdout).toBe("web\n");
  });

  it("prints YAML that applies again unchanged (from stdin)", async () => {
    const yaml = await run(["get", "workload", "web", "-o", "yaml"]);
    expect(yaml.stdout).toMatch(/^id: web\n/);
    const applied = await run(["apply", "-f", "-"], { stdin: yaml.stdout });
    expect([applied.code, applied.stdout]).toEqual([0, "workload/web unchanged\n"]);
  });

  it("describes a workload: spec, replicas with node and state, diagnosis, events", async () => {
    const result = await run(["describe", "workload", "web"]);
    expect(result.code).toBe(0);
    const text = result.stdout;
    expect(text).toMatch(/^Name: +web$/m);
    expect(text).toMatch(/^State: +running \(2\/2 ready\)$/m);
    expect(text).toContain(
      "Spec:\n  container:\n    image: nginx:1.27\n    ports:\n      - containerPort: 80\n        hostPort: 8080\n",
    );
    expect(text).toMatch(/INDEX +NODE +STATE +RESTARTS +SINCE +ENDPOINTS +REASON\n +0 +n[12] +running +0 /);
    expect(text).toMatch(/Placement diagnosis:\n {2}replica 0:\n {4}placed on n[12]/);
    expect(text).toMatch(/Events:\n.*\n.*WorkloadApplied +workload\/web /);
  });

  it("explains where each replica went and why", async () => {
    const result = await run(["explain", "web"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Workload web \(revision [0-9a-f]{16}\)\nReplica 0: running on n[12]\n/);
    expect(result.stdout).toContain("nodes: 2 evaluated, 2 feasible, 2 scored");
    expect(result.stdout).toMatch(/filtered out:\n +1 host port in use \(tcp\/8080\) \(host-ports\)/);
    const json = JSON.parse((await run(["explain", "web", "-o", "json"])).stdout);
    expect(json.replicas).toHaveLength(2);
  });

  it("lists the events of a workload", async () => {
    const result = await run(["get", "events", "web"]);
    expect(result.stdout).toMatch(/^AGE +SEVERITY +TYPE +OBJECT +MESSAGE\n/);
    expect(result.stdout).toMatch(/info +ReplicaPlaced +workload\/web\[0\] +replica 0 placed on/);
  });

  it("shows the cluster status", async () => {
    expectGolden("cluster-status", normalise((await run(["cluster", "status"])).stdout, cluster.endpoint));
  });
});

describe("plan and bad input", () => {
  it("plans: exit 0 when every replica would be placed, 2 when one would not, with the diagnosis", async () => {
    const ok = await run(["plan", "-f", join(dir, "web.yaml")]);
    expect([ok.code, ok.stdout.split("\n")[0]]).toEqual([
      0,
      expect.stringMatching(/^web: schedulable, no change \(revision/),
    ]);
    const big = spec("big.yaml", "id: big\ncontainer: {image: big:1}\nresources: {memoryMib: 9000}\n");
    const no = await run(["plan", "-f", big]);
    expect(no.code).toBe(2);
    expectGolden("plan-unschedulable", normalise(no.stdout));
    expect(JSON.parse((await run(["plan", "-f", big, "-o", "json"])).stdout).schedulable).toBeUndefined();
  });

  it("names the file, line and field of a mistyped spec, and exits 1 without applying anything", async () => {
    const path = spec(
      "typo.yaml",
      "id: typo\ncontainer:\n  image: nginx\n  ports:\n    - containerPort: 80\n      hostPrt: 8080\n",
    );
    const result = await run(["apply", "-f", path]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `error: spec file problem:\n  ${path}:6:7: container.ports[0].hostPrt: unknown field (did you mean hostPort?)\n`,
    );
    expect((await run(["get", "workload", "typo"])).code).toBe(1);
  });

  it("reports every problem of several documents", async () => {
    const path = spec(
      "bad.yaml",
      "id: Bad\ncontainer: {image: x}\n---\nid: ok\nreplicas: lots\ncontainer: {image: x}\n",
    );
    const result = await run(["apply", "-f", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error: 2 spec file problems:");
    expect(result.stderr).toContain(`${path}:1:1: id: workload id must be a DNS-1123 label`);
    expect(result.stderr).toContain(`${path}:5:11: replicas: must be an integer`);
  });

  it("applies several documents in one call: a refused one names its file and document, and none is applied", async () => {
    expect((await run(["apply", "-f", spec("kindy.yaml", "id: kindy\ncontainer: {image: x}\n")])).code).toBe(0);
    const path = spec(
      "two.yaml",
      "id: fresh-a\ncontainer: {image: x}\n---\nid: kindy\ncompose: {inlineYaml: 'services: {web: {image: x}}'}\n",
    );
    const refused = await run(["apply", "-f", path]);
    expect([refused.code, refused.stdout]).toEqual([1, ""]);
    expect(refused.stderr).toContain(`${path}#2 (kindy) kind: is immutable`);
    expect((await run(["get", "workload", "fresh-a"])).code).toBe(1);
    const fixed = spec("two-fixed.yaml", "id: fresh-a\ncontainer: {image: x}\n---\nid: kindy\ncontainer: {image: x}\n");
    const applied = await run(["apply", "-f", fixed]);
    expect([applied.code, applied.stdout]).toEqual([0, "workload/fresh-a created\nworkload/kindy unchanged\n"]);
    expect((await run(["delete", "fresh-a", "kindy"])).code).toBe(0);
  });

  it("exits 1 for an unknown command or resource, and for a missing workload", async () => {
    expect((await run(["frobnicate"])).code).toBe(1);
    const resource = await run(["get", "pods"]);
    expect([resource.code, resource.stderr]).toEqual([
      1,
      'error: unknown resource "pods": use workloads, nodes or events\n',
    ]);
    const missing = await run(["describe", "workload", "nope"]);
    expect([missing.code, missing.stderr]).toEqual([1, "error: workload nope not found (NOT_FOUND)\n"]);
  });

  it("exits 3 with a hint when the control plane cannot be reached", async () => {
    const result = await run(["get", "workloads"], { env: { PERSYS_ENDPOINT: "127.0.0.1:1" } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /^error: cannot reach the control plane at 127\.0\.0\.1:1 \(connect ECONNREFUSED 127\.0\.0\.1:1\) \(UNAVAILABLE\)\nhint: /,
    );
  });

  it("exits 2 when apply --wait times out, printing why", async () => {
    const path = spec(
      "needs-gpu.yaml",
      "id: needs-gpu\ncontainer: {image: x}\nplacement: {requiredCapabilities: [gpu]}\n",
    );
    const result = await run(["apply", "-f", path, "--wait", "--wait-timeout", "1s"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      "needs-gpu[0] pending — UNSCHEDULABLE: 0/2 nodes are available: 2 missing capability gpu",
    );
    expect(result.stdout).toMatch(/workload\/needs-gpu not running: workload needs-gpu is not running after 1s/);
    expect(result.stdout).toContain("  filtered out:\n    2 capability missing (gpu) (runtime-capability)");
    expect((await run(["delete", "needs-gpu", "big", "--ignore-not-found"])).code).toBe(0);
  });
});

describe("lifecycle and nodes", () => {
  it("stops and starts with --wait, restarts and retries", async () => {
    const stop = await run(["stop", "web", "--wait"]);
    expect([stop.code, stop.stdout.split("\n")[0], stop.stdout]).toEqual([
      0,
      "workload/web stopping",
      expect.stringMatching(/workload\/web stopped/),
    ]);
    const start = await run(["start", "web", "--wait"]);
    expect([start.code, start.stdout]).toEqual([0, expect.stringMatching(/workload\/web running \(2\/2 ready\)/)]);
    expect((await run(["restart", "web"])).stdout).toBe("workload/web restarting\n");
    expect((await run(["restart", "web", "--reboot", "--replica", "1"])).stdout).toBe("workload/web rebooting\n");
    expect((await run(["retry", "web", "--replica", "0"])).stdout).toBe("workload/web retried (nothing to retry)\n");
  });

  it("cordons, drains (dry run) and uncordons a node", async () => {
    expect((await run(["node", "cordon", "n2", "--reason", "disk swap"])).stdout).toBe("node/n2 cordoned\n");
    expect((await run(["get", "nodes"])).stdout).toMatch(/^n2 +ready,cordoned /m);
    const drain = await run(["node", "drain", "n2", "--dry-run"]);
    expect(drain.stdout).toMatch(/^node\/n2 would be drained; would move 1 replica\(s\):\n {2}web\[[01]\]\n$/);
    expect((await run(["node", "uncordon", "n2"])).stdout).toBe("node/n2 uncordoned\n");
    expect((await run(["describe", "node", "n2"])).stdout).toMatch(/^State: +ready$/m);
  });

  it("prints changes with get --watch", async () => {
    const live = persysctlLive(["get", "workloads", "--watch"], { env });
    await live.waitFor(/^web +container +running/m);
    await run(["apply", "-f", spec("watched.yaml", "id: watched\ncontainer: {image: w:1}\n")]);
    await live.waitFor(/^watched +container +running +1\/1/m);
    expect(await live.stop()).toBe(130);
    expect(live.output().match(/^NAME /gm)).toHaveLength(1);
  });

  it("deletes and waits until gone", async () => {
    const result = await run(["delete", "workload", "watched", "--wait"]);
    expect([result.code, result.stdout]).toEqual([
      0,
      expect.stringMatching(/^workload\/watched deleted\nworkload\/watched deleted after /),
    ]);
    expect((await run(["delete", "watched"])).code).toBe(1);
  });
});

describe("the Go persysctl's commands", () => {
  it.each([
    { args: ["workload", "list"], out: /^NAME +KIND +STATE/ },
    { args: ["workload", "get", "--id", "web"], out: /^id: web\n/ },
    { args: ["workload", "retry", "--id", "web"], out: /^workload\/web retried/ },
    { args: ["node", "list"], out: /^NAME +STATE +CPU/ },
    { args: ["node", "get", "--id", "n1"], out: /^id: n1\n/ },
    { args: ["cluster", "get"], out: /^Endpoint:/ },
    { args: ["metrics"], out: /Nodes: +2 total: 2 ready/ },
  ])("$args", async ({ args, out }) => {
    const result = await run(args);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(result.stdout).toMatch(out);
  });

  it("schedules a workload from flags", async () => {
    const result = await run([
      "workload",
      "schedule",
      "--id",
      "legacy",
      "--image",
      "nginx",
      "--ports",
      "9090:80",
      "--wait",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^workload\/legacy created\n[\s\S]*workload\/legacy running \(1\/1 ready\)/);
    const json = JSON.parse((await run(["get", "wl", "legacy", "-o", "json"])).stdout);
    expect(json.container.ports).toEqual([{ containerPort: 80, hostPort: 9090, protocol: "PROTOCOL_TCP" }]);
  });
});

describe("configuration, help, colour, completion", () => {
  it("keeps contexts and selects the endpoint by context", async () => {
    const cfg = { PERSYS_CONFIG: join(dir, "ctx.yaml"), PERSYS_ENDPOINT: "" };
    expect((await run(["config", "set-context", "local", "--endpoint", cluster.endpoint], { env: cfg })).code).toBe(0);
    expect((await run(["config", "set-context", "dead", "--endpoint", "127.0.0.1:1"], { env: cfg })).code).toBe(0);
    expectGolden(
      "get-contexts",
      normalise((await run(["config", "get-contexts"], { env: cfg })).stdout, cluster.endpoint),
    );
    expect((await run(["get", "nodes", "-o", "name"], { env: cfg })).stdout).toBe("n1\nn2\n");
    expect((await run(["--context", "dead", "get", "nodes"], { env: cfg })).code).toBe(3);
    expect((await run(["config", "use-context", "dead"], { env: cfg })).stdout).toBe('Switched to context "dead".\n');
    expect((await run(["get", "nodes"], { env: cfg })).code).toBe(3);
    expect((await run(["config", "use-context", "nope"], { env: cfg })).code).toBe(1);
  });

  it("colours only on a terminal or when forced, never with NO_COLOR", async () => {
    const piped = await run(["get", "workloads"]);
    expect(piped.stdout).not.toContain("\u001b[");
    const forced = await run(["get", "workloads"], { env: { FORCE_COLOR: "1" } });
    expect(forced.stdout).toContain("\u001b[32mrunning\u001b[39m");
    const off = await run(["--no-color", "get", "workloads"], { env: { FORCE_COLOR: "1" } });
    expect(off.stdout).not.toContain("\u001b[");
  });

  it("prints help with examples and the exit codes", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:\n  persysctl apply -f web.yaml --wait");
    expect(help.stdout).toContain("Exit codes: 0 ok, 1 error or bad input, 2 not placeable");
    const apply = await run(["apply", "--help"]);
    expect(apply.stdout).toMatch(/Usage: persysctl apply \[options\][\s\S]*--wait[\s\S]*Examples:/);
  });

  it("prints a bash completion script that bash accepts", async () => {
    const script = (await run(["completion", "bash"])).stdout;
    expect(script).toContain("complete -F _persysctl persysctl");
    const path = spec("completion.bash", script);
    execFileSync("bash", ["-n", path]);
    const words = execFileSync(
      "bash",
      ["-c", `source ${path}; COMP_WORDS=(persysctl node ""); COMP_CWORD=2; _persysctl; echo "\${COMPREPLY[*]}"`],
      { encoding: "utf8" },
    );
    expect(words.split(" ")).toEqual(expect.arrayContaining(["cordon", "drain", "uncordon"]));
    expect((await run(["completion", "zsh"])).stdout).toMatch(/^#compdef persysctl\n/);
  });

  it("prints client and server versions", async () => {
    expect((await run(["version"])).stdout).toMatch(/^Client: persysctl \d+\.\d+\.\d+\nServer: persys \S+ at /);
  });
});
