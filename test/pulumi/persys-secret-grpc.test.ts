/**
 * `persys:index:Secret` through the real provider plugin over `pulumirpc.ResourceProvider`, against
 * a real control plane: check failures by field, canonical (secret) inputs, a preview that writes
 * nothing, create/update with `data` marked secret in every response, diff (data → update in place,
 * name → replace), read (refresh keeps the state's values; drift outside Pulumi shows as a diff;
 * import with only the id), delete twice, read after delete. No secret value ever reaches the
 * plugin's log output (stderr) or an error message.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rpc from "@pulumi/pulumi/proto/provider_pb.js";
import type { Empty } from "google-protobuf/google/protobuf/empty_pb.js";
import { Struct } from "google-protobuf/google/protobuf/struct_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../controlplane/control-plane-harness.js";
import { writePersysPlugin } from "./support/persys-plugin.js";
import { type RunningPlugin, startPlugin, unary } from "./support/provider-process.js";

const struct = (value: Record<string, unknown>) => Struct.fromJavaScript(value as never);
const js = (s: Struct | undefined) => (s?.toJavaScript() ?? {}) as Record<string, any>;
const SIG = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270" };
const secret = (value: unknown) => ({ ...SIG, value });
const NOT_READABLE = "<changed outside Pulumi>";

describe("persys:index:Secret over pulumirpc.ResourceProvider", () => {
  let h: Harness;
  let dir: string;
  let running: RunningPlugin;
  const suffix = Date.now().toString(36);
  const name = `db-${suffix}`;
  const urn = (resource = "db") => `urn:pulumi:dev::grpc::persys:index:Secret::${resource}`;
  // Values that must never show up in a log line or an error.
  const password = `pw-${randomUUID()}`;
  const rotated = `pw2-${randomUUID()}`;
  const values = [password, rotated];

  beforeAll(async () => {
    h = await startHarness();
    dir = mkdtempSync(join(tmpdir(), "persys-secret-grpc-"));
    running = await startPlugin(writePersysPlugin(join(dir, "plugin"), { PERSYS_CONFIG: join(dir, "none.yaml") }));
    await unary<rpc.ConfigureRequest, rpc.ConfigureResponse>(
      running.client,
      running.client.configure,
      new rpc.ConfigureRequest().setAcceptsecrets(true).setArgs(struct({ endpoint: h.server.grpcAddress })),
    );
  });

  afterAll(async () => {
    await running?.stop();
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const c = () => running.client;
  const check = (news: Record<string, unknown>, olds: Record<string, unknown> = {}) =>
    unary<rpc.CheckRequest, rpc.CheckResponse>(
      c(),
      c().check,
      new rpc.CheckRequest().setUrn(urn()).setOlds(struct(olds)).setNews(struct(news)).setRandomseed(Buffer.from("s")),
    );
  const create = (props: Record<string, unknown>, preview = false) =>
    unary<rpc.CreateRequest, rpc.CreateResponse>(
      c(),
      c().create,
      new rpc.CreateRequest().setUrn(urn()).setProperties(struct(props)).setTimeout(30).setPreview(preview),
    );
  const update = (olds: Record<string, unknown>, news: Record<string, unknown>) =>
    unary<rpc.UpdateRequest, rpc.UpdateResponse>(
      c(),
      c().update,
      new rpc.UpdateRequest().setUrn(urn()).setId(name).setOlds(struct(olds)).setNews(struct(news)).setTimeout(30),
    );
  const diff = (olds: Record<string, unknown>, news: Record<string, unknown>) =>
    unary<rpc.DiffRequest, rpc.DiffResponse>(
      c(),
      c().diff,
      new rpc.DiffRequest().setUrn(urn()).setId(name).setOlds(struct(olds)).setNews(struct(news)),
    );
  const read = (props: Record<string, unknown> = {}) =>
    unary<rpc.ReadRequest, rpc.ReadResponse>(
      c(),
      c().read,
      new rpc.ReadRequest().setUrn(urn()).setId(name).setProperties(struct(props)),
    );
  const del = () =>
    unary<rpc.DeleteRequest, Empty>(
      c(),
      c().delete,
      new rpc.DeleteRequest().setUrn(urn()).setId(name).setProperties(struct({})).setTimeout(30),
    );
  const stored = async () => (await h.rest("GET", `/v1/secrets/${name}`)).body?.secret;

  it("Check refuses a bad name and a bad key, naming the field and never echoing a value", async () => {
    const res = await check({ name: "Bad_Name", data: { "bad key": password } });
    const failures = res.getFailuresList().map((f) => f.toObject());
    expect(failures.map((f) => f.property).sort()).toEqual(['data["bad key"]', "name"]);
    expect(JSON.stringify(failures)).not.toContain(password);
  });

  it("Check returns canonical inputs with data secret, even when it arrived plain", async () => {
    const res = await check({ name, data: { user: "app", password } });
    expect(res.getFailuresList()).toEqual([]);
    expect(js(res.getInputs())).toEqual({ name, data: secret({ password, user: "app" }) });
  });

  const inputs = () => ({ name, data: { password, user: "app" } });
  let outs: Record<string, any> = {};

  it("Create in a preview writes nothing", async () => {
    const res = await create(inputs(), true);
    expect(js(res.getProperties())).toEqual({ name, data: secret(inputs().data), keys: ["password", "user"] });
    expect((await h.rest("GET", `/v1/secrets/${name}`)).status).toBe(404);
  });

  it("Create puts the secret; the response marks data secret", async () => {
    const res = await create(inputs());
    expect(res.getId()).toBe(name);
    const props = js(res.getProperties());
    expect(props).toEqual({ name, data: secret(inputs().data), keys: ["password", "user"], version: 1 });
    expect(await stored()).toMatchObject({ name, keys: ["password", "user"], version: 1 });
    outs = { ...props, data: props.data.value };
  });

  it("Create of a secret that already exists says to import it", async () => {
    const error = await create(inputs()).catch((e) => e);
    expect(String(error.details)).toMatch(
      new RegExp(`already exists.*pulumi import persys:index:Secret <name> ${name}`),
    );
  });

  it("Diff: the same inputs are no change; new data updates in place; a new name replaces", async () => {
    expect((await diff(outs, inputs())).getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_NONE);
    const changed = await diff(outs, { name, data: secret({ password: rotated, user: "app" }) });
    expect(changed.getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_SOME);
    expect(changed.getReplacesList()).toEqual([]);
    expect(changed.getDetaileddiffMap().get("data.password")?.getKind()).toBe(rpc.PropertyDiff.Kind.UPDATE);
    const renamed = await diff(outs, { ...inputs(), name: `${name}-2` });
    expect(renamed.getReplacesList()).toEqual(["name"]);
  });

  it("Update puts the new data: version 2, data secret", async () => {
    const news = { name, data: { password: rotated, user: "app" } };
    const props = js((await update(outs, news)).getProperties());
    expect(props).toEqual({ name, data: secret(news.data), keys: ["password", "user"], version: 2 });
    expect((await stored()).version).toBe(2);
    outs = { ...props, data: props.data.value };
  });

  it("Read keeps the state's values (secret) while Persys is in step", async () => {
    const res = await read({ ...outs, data: secret(outs.data) });
    expect(res.getId()).toBe(name);
    expect(js(res.getProperties())).toEqual({ ...outs, data: secret(outs.data) });
    expect(js(res.getInputs())).toEqual({ name, data: secret(outs.data) });
  });

  it("Read after a change outside Pulumi shows drift that the next diff picks up", async () => {
    await h.rest("PUT", `/v1/secrets/${name}`, { stringData: { password: "x", user: "app", extra: "y" } });
    const res = await read({ ...outs, data: secret(outs.data) });
    const refreshed = js(res.getInputs());
    expect(refreshed.data).toEqual(secret({ extra: NOT_READABLE, password: NOT_READABLE, user: NOT_READABLE }));
    expect(js(res.getProperties())).toMatchObject({ keys: ["extra", "password", "user"], version: 3 });
    const d = await diff({ ...refreshed, data: refreshed.data.value }, outs);
    expect(d.getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_SOME);
    expect(d.getDetaileddiffMap().get("data.extra")?.getKind()).toBe(rpc.PropertyDiff.Kind.DELETE);
  });

  it("Read with only the id (import) returns name and keys, data secret", async () => {
    const res = await read();
    expect(js(res.getInputs()).name).toBe(name);
    expect(js(res.getProperties())).toMatchObject({ keys: ["extra", "password", "user"], data: SIG });
  });

  it("Delete removes it; deleting again succeeds; Read then returns no id", async () => {
    await del();
    expect((await h.rest("GET", `/v1/secrets/${name}`)).status).toBe(404);
    await del();
    expect((await read(outs)).getId()).toBe("");
  });

  it("no secret value reached the plugin's log output", () => {
    for (const value of values) expect(running.stderr()).not.toContain(value);
  });
});
