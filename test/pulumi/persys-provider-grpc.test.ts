/**
 * The Persys provider plugin driven over `pulumirpc.ResourceProvider` as the engine drives it —
 * GetSchema, Configure, Check, Diff, Create (also as a preview), Read (refresh and import), Update,
 * Delete, Invoke — against a real control plane (real etcd and Redis) with simulated agents, so
 * containers, Compose stacks and VMs are placed and "run" without Docker or libvirt. Fast: no CLI.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as plugin from "@pulumi/pulumi/proto/plugin_pb.js";
import * as rpc from "@pulumi/pulumi/proto/provider_pb.js";
import { Empty } from "google-protobuf/google/protobuf/empty_pb.js";
import { Struct } from "google-protobuf/google/protobuf/struct_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../controlplane/control-plane-harness.js";
import type { SimulatedNode } from "../support/sim-agents/index.js";
import { writePersysPlugin } from "./support/persys-plugin.js";
import { type RunningPlugin, startPlugin, unary } from "./support/provider-process.js";

const struct = (value: Record<string, unknown>) => Struct.fromJavaScript(value as never);
const js = (s: Struct | undefined) => (s?.toJavaScript() ?? {}) as Record<string, any>;
const urnOf = (type: string, name: string) => `urn:pulumi:dev::grpc::persys:index:${type}::${name}`;
const SECRET = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270" };

describe("pulumi-resource-persys over pulumirpc.ResourceProvider", () => {
  let h: Harness;
  let node: SimulatedNode;
  let dir: string;
  let running: RunningPlugin;
  const suffix = Date.now().toString(36);
  const id = (name: string) => `${name}-${suffix}`;

  beforeAll(async () => {
    h = await startHarness();
    node = await h.addNode({ id: id("node-a"), capabilities: ["kvm"] });
    dir = mkdtempSync(join(tmpdir(), "persys-provider-grpc-"));
    // No PERSYS_ENDPOINT: the endpoint comes from Configure, as from `persys:endpoint` in the stack config.
    running = await startPlugin(writePersysPlugin(join(dir, "plugin"), { PERSYS_CONFIG: join(dir, "none.yaml") }));
  });

  afterAll(async () => {
    await running?.stop();
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const c = () => running.client;
  const check = (type: string, name: string, news: Record<string, unknown>, olds: Record<string, unknown> = {}) =>
    unary<rpc.CheckRequest, rpc.CheckResponse>(
      c(),
      c().check,
      new rpc.CheckRequest()
        .setUrn(urnOf(type, name))
        .setOlds(struct(olds))
        .setNews(struct(news))
        .setRandomseed(Buffer.from(name)),
    );
  const create = (
    type: string,
    name: string,
    props: Record<string, unknown>,
    opts: { timeout?: number; preview?: boolean } = {},
  ) =>
    unary<rpc.CreateRequest, rpc.CreateResponse>(
      c(),
      c().create,
      new rpc.CreateRequest()
        .setUrn(urnOf(type, name))
        .setProperties(struct(props))
        .setTimeout(opts.timeout ?? 30)
        .setPreview(opts.preview ?? false),
    );
  const diff = (type: string, name: string, olds: Record<string, unknown>, news: Record<string, unknown>) =>
    unary<rpc.DiffRequest, rpc.DiffResponse>(
      c(),
      c().diff,
      new rpc.DiffRequest()
        .setUrn(urnOf(type, name))
        .setId(String(olds.name))
        .setOlds(struct(olds))
        .setNews(struct(news)),
    );
  const read = (type: string, name: string, workloadId: string, props: Record<string, unknown> = {}) =>
    unary<rpc.ReadRequest, rpc.ReadResponse>(
      c(),
      c().read,
      new rpc.ReadRequest().setUrn(urnOf(type, name)).setId(workloadId).setProperties(struct(props)),
    );
  const del = (type: string, name: string, workloadId: string) =>
    unary<rpc.DeleteRequest, Empty>(
      c(),
      c().delete,
      new rpc.DeleteRequest().setUrn(urnOf(type, name)).setId(workloadId).setProperties(struct({})).setTimeout(30),
    );
  const workload = async (workloadId: string) => (await h.rest("GET", `/v1/workloads/${workloadId}`)).body?.workload;

  it("GetPluginInfo and GetSchema describe the persys package", async () => {
    const info = await unary<Empty, plugin.PluginInfo>(c(), c().getPluginInfo, new Empty());
    expect(info.getVersion()).toBe("0.1.0");
    const res = await unary<rpc.GetSchemaRequest, rpc.GetSchemaResponse>(
      c(),
      c().getSchema,
      new rpc.GetSchemaRequest(),
    );
    const schema = JSON.parse(res.getSchema());
    expect(schema.name).toBe("persys");
    expect(Object.keys(schema.resources).sort()).toEqual([
      "persys:index:ComposeStack",
      "persys:index:Container",
      "persys:index:Secret",
      "persys:index:VirtualMachine",
    ]);
    expect(Object.keys(schema.functions).sort()).toEqual(["persys:index:getNodes", "persys:index:getPlan"]);
  });

  it("Configure takes the endpoint (and a secret token) and announces previews", async () => {
    // A real operator token of this cluster: the control plane verifies every token it is shown.
    const { token } = await h.server.controlPlane.tokens.create({ name: "pulumi", role: "operator" });
    const req = new rpc.ConfigureRequest()
      .setAcceptsecrets(true)
      .setArgs(struct({ endpoint: h.server.grpcAddress, token: { ...SECRET, value: token } }));
    const res = await unary<rpc.ConfigureRequest, rpc.ConfigureResponse>(c(), c().configure, req);
    expect(res.getAcceptsecrets()).toBe(true);
    expect(res.getSupportspreview()).toBe(true);
  });

  it("Check returns {property, reason} failures named by input", async () => {
    const res = await check("Container", "bad", { name: "Bad_Name", image: "", ports: [{ container: 0 }] });
    const failures = res.getFailuresList().map((f) => f.toObject());
    expect(failures.map((f) => f.property).sort()).toEqual(["image", "name", "ports[0].container"]);
    for (const f of failures) expect(f.reason).not.toBe("");
  });

  it("Check names the workload and returns canonical inputs; secrets stay secret", async () => {
    const res = await check("Container", "web", {
      image: "persys-test/web:1",
      replicas: 1,
      env: { B: "2", A: { ...SECRET, value: "1" } },
      ports: [{ container: 8080, protocol: "tcp" }],
    });
    expect(res.getFailuresList()).toEqual([]);
    const inputs = js(res.getInputs());
    expect(inputs.name).toMatch(/^web-[0-9a-f]{7}$/);
    expect(inputs.replicas).toBeUndefined(); // the default, left out
    expect(inputs.ports).toEqual([{ container: 8080 }]);
    expect(inputs.env).toEqual({ ...SECRET, value: { A: "1", B: "2" } });
  });

  let web: Record<string, any> = {};
  const webInputs = () => ({ name: id("web"), image: "persys-test/web:1", env: { GREETING: "hi" }, memoryMiB: 64 });

  it("Create in a preview writes nothing and shows the planned placement", async () => {
    const res = await create("Container", "web", webInputs(), { preview: true });
    const outs = js(res.getProperties());
    expect(outs.status).toBe("planned");
    expect(outs.placements).toEqual([{ replica: 0, node: node.id, state: "create", reason: expect.any(String) }]);
    expect((await h.rest("GET", `/v1/workloads/${id("web")}`)).status).toBe(404);
  });

  it("Create applies the container and returns once its replica runs", async () => {
    const res = await create("Container", "web", webInputs());
    expect(res.getId()).toBe(id("web"));
    web = js(res.getProperties());
    expect(web).toMatchObject({ ...webInputs(), status: "running", revision: expect.stringMatching(/^[0-9a-f]{8,}/) });
    expect(web.placements).toEqual([{ replica: 0, node: node.id, state: "running", reason: expect.any(String) }]);
    expect((await workload(id("web"))).status.state).toBe("WORKLOAD_STATE_RUNNING");
  });

  it("Diff: the same inputs are no change; an env change updates in place; a new name replaces", async () => {
    const same = await diff("Container", "web", web, webInputs());
    expect(same.getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_NONE);
    const env = await diff("Container", "web", web, { ...webInputs(), env: { GREETING: "hello" } });
    expect(env.getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_SOME);
    expect(env.getReplacesList()).toEqual([]);
    expect(env.getDetaileddiffMap().get("env.GREETING")?.getKind()).toBe(rpc.PropertyDiff.Kind.UPDATE);
    const renamed = await diff("Container", "web", web, { ...webInputs(), name: id("web2") });
    expect(renamed.getReplacesList()).toEqual(["name"]);
    expect(renamed.getDeletebeforereplace()).toBe(false);
    const ported = await diff("Container", "web", web, {
      ...webInputs(),
      name: id("web2"),
      ports: [{ container: 8080, host: 18080 }],
    });
    expect(ported.getDeletebeforereplace()).toBe(true);
  });

  it("Update rolls the same workload to the new revision", async () => {
    const news = { ...webInputs(), env: { GREETING: "hello" } };
    const req = new rpc.UpdateRequest()
      .setUrn(urnOf("Container", "web"))
      .setId(id("web"))
      .setOlds(struct(web))
      .setNews(struct(news))
      .setTimeout(30);
    const outs = js((await unary<rpc.UpdateRequest, rpc.UpdateResponse>(c(), c().update, req)).getProperties());
    expect(outs).toMatchObject({ ...news, status: "running" });
    expect(outs.revision).not.toBe(web.revision);
    const stored = await workload(id("web"));
    expect(stored.container.env).toEqual({ GREETING: "hello" });
    expect(stored.status.revision).toBe(outs.revision);
    web = outs;
  });

  it("Read returns outputs and inputs (refresh; import with only the id)", async () => {
    const res = await read("Container", "web", id("web"));
    expect(res.getId()).toBe(id("web"));
    expect(js(res.getInputs())).toEqual({ ...webInputs(), env: { GREETING: "hello" } });
    expect(js(res.getProperties())).toMatchObject({ revision: web.revision, status: "running" });
    // What import stores diffs to nothing against the program that declares it.
    const d = await diff("Container", "web", js(res.getProperties()), { ...webInputs(), env: { GREETING: "hello" } });
    expect(d.getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_NONE);
  });

  it("Delete waits until the workload is gone; deleting again succeeds; Read then returns no id", async () => {
    await del("Container", "web", id("web"));
    expect((await h.rest("GET", `/v1/workloads/${id("web")}`)).status).toBe(404);
    await del("Container", "web", id("web"));
    expect((await read("Container", "web", id("web"))).getId()).toBe("");
  });

  it("a failing create leaves nothing behind and says why", async () => {
    const name = id("broken");
    node.failNextApply(name, { code: "IMAGE_NOT_FOUND", message: "persys-test/nope:1 not found" });
    const error = await create("Container", "broken", { name, image: "persys-test/nope:1" }).catch((e) => e);
    expect(String(error.details)).toContain(`create workload ${name} failed`);
    expect(String(error.details)).toContain("persys-test/nope:1 not found");
    expect(String(error.details)).toContain("nothing was left behind");
    expect((await h.rest("GET", `/v1/workloads/${name}`)).status).toBe(404);
  });

  it("an unschedulable create fails within its custom timeout with the scheduler's diagnosis", async () => {
    const name = id("huge");
    const started = Date.now();
    const error = await create(
      "Container",
      "huge",
      { name, image: "persys-test/web:1", memoryMiB: 999_999 },
      { timeout: 3 },
    ).catch((e) => e);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(String(error.details)).toMatch(/0\/1 nodes/);
    expect(String(error.details)).toMatch(/insufficient memory/);
    expect((await h.rest("GET", `/v1/workloads/${name}`)).status).toBe(404);
  });

  it("a ComposeStack is created, read back and deleted", async () => {
    const inputs = {
      name: id("blog"),
      inlineYaml: "services:\n  web:\n    image: persys-test/web:1\n",
      env: { TAG: "1" },
    };
    const checked = js((await check("ComposeStack", "blog", inputs)).getInputs());
    expect(checked).toEqual(inputs);
    const outs = js((await create("ComposeStack", "blog", checked)).getProperties());
    expect(outs).toMatchObject({ ...inputs, status: "running" });
    expect((await workload(id("blog"))).kind).toBe("WORKLOAD_KIND_COMPOSE");
    expect(js((await read("ComposeStack", "blog", id("blog"))).getInputs())).toEqual(inputs);
    // A container resource does not adopt a compose workload of the same id.
    expect((await read("Container", "blog", id("blog"))).getId()).toBe("");
    await del("ComposeStack", "blog", id("blog"));
    expect((await h.rest("GET", `/v1/workloads/${id("blog")}`)).status).toBe(404);
  });

  it("a VirtualMachine is created on a kvm node; a disk change replaces it, deleting first", async () => {
    const inputs = {
      name: id("vm"),
      vcpus: 1,
      memoryMiB: 256,
      imageName: "cirros",
      disks: [{ name: "root", sizeGiB: 1, boot: true }],
      placement: { requiredCapabilities: ["kvm"] },
    };
    const outs = js(
      (
        await create("VirtualMachine", "vm", js((await check("VirtualMachine", "vm", inputs)).getInputs()))
      ).getProperties(),
    );
    expect(outs).toMatchObject({ ...inputs, status: "running" });
    expect((await workload(id("vm"))).vm.disks).toEqual([
      { name: "root", sizeGib: 1, format: "DISK_FORMAT_QCOW2", boot: true },
    ]);
    const d = await diff("VirtualMachine", "vm", outs, {
      ...inputs,
      disks: [{ name: "root", sizeGiB: 2, boot: true }],
    });
    expect(d.getReplacesList()).toEqual(["disks"]);
    expect(d.getDeletebeforereplace()).toBe(true);
    await del("VirtualMachine", "vm", id("vm"));
    expect((await h.rest("GET", `/v1/workloads/${id("vm")}`)).status).toBe(404);
  });

  it("Invoke getNodes and getPlan (with the diagnosis of what does not fit)", async () => {
    const invoke = (tok: string, args: Record<string, unknown>) =>
      unary<rpc.InvokeRequest, rpc.InvokeResponse>(
        c(),
        c().invoke,
        new rpc.InvokeRequest().setTok(tok).setArgs(struct(args)),
      );
    const nodes = js((await invoke("persys:index:getNodes", {})).getReturn()).nodes;
    expect(nodes).toEqual([expect.objectContaining({ id: node.id, state: "ready", capabilities: ["kvm"] })]);
    const fits = js(
      (await invoke("persys:index:getPlan", { kind: "container", spec: { name: id("p"), image: "x:1" } })).getReturn(),
    );
    expect(fits).toMatchObject({ schedulable: true, replicas: [{ replica: 0, action: "create", node: node.id }] });
    const huge = { kind: "vm", spec: { name: id("p"), vcpus: 64, memoryMiB: 1_000_000, imageName: "cirros" } };
    const unfit = js((await invoke("persys:index:getPlan", huge)).getReturn());
    expect(unfit.schedulable).toBe(false);
    expect(unfit.message).toMatch(/0\/1 nodes.*insufficient/);
    const bad = await invoke("persys:index:getPlan", { kind: "container", spec: { name: id("p"), image: "" } });
    expect(bad.getFailuresList().map((f) => f.getProperty())).toEqual(["spec.image"]);
    expect((await h.rest("GET", `/v1/workloads/${id("p")}`)).status).toBe(404);
  });
});
