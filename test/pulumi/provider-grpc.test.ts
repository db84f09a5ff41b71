/**
 * Drives the probe provider plugin over gRPC as the Pulumi engine does, without the CLI: start the
 * `pulumi-resource-persys` launcher, read its port from stdout, and call `pulumirpc.ResourceProvider`
 * (GetPluginInfo, Configure, Check, Diff, Create, Read, Update, Delete) with the message classes
 * generated into `@pulumi/pulumi/proto`. This is the level the real provider's contract tests will
 * run at (fast, no engine), with the CLI tests in provider-plugin.test.ts on top.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import type * as plugin from "@pulumi/pulumi/proto/plugin_pb.js";
import * as rpc from "@pulumi/pulumi/proto/provider_pb.js";
import { Empty } from "google-protobuf/google/protobuf/empty_pb.js";
import { Struct } from "google-protobuf/google/protobuf/struct_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROBE_TYPE, readProbeFile } from "./fixtures/probe-provider.js";
import { type RunningPlugin, startPlugin, unary, writeProbePlugin } from "./support/provider-process.js";

const urn = `urn:pulumi:dev::grpc-test::${PROBE_TYPE}::probe`;
const struct = (value: Record<string, unknown>) => Struct.fromJavaScript(value as never);

describe("probe provider over pulumirpc.ResourceProvider", () => {
  let dir: string;
  let statePath: string;
  let running: RunningPlugin;
  let id = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "persys-provider-grpc-"));
    statePath = join(dir, "probes.json");
    const executable = writeProbePlugin(join(dir, "plugin"));
    running = await startPlugin(executable, { env: { PERSYS_PROBE_STATE: statePath } });
  });

  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = () => running.client;

  it("GetPluginInfo reports the provider's version", async () => {
    const info = await unary<Empty, plugin.PluginInfo>(client(), client().getPluginInfo, new Empty());
    expect(info.getVersion()).toBe("0.1.0");
  });

  it("Configure accepts secrets, resources and outputs", async () => {
    const request = new rpc.ConfigureRequest().setAcceptsecrets(true).setAcceptresources(true).setArgs(struct({}));
    const res = await unary<rpc.ConfigureRequest, rpc.ConfigureResponse>(client(), client().configure, request);
    expect(res.getAcceptsecrets()).toBe(true);
    expect(res.getAcceptresources()).toBe(true);
    expect(res.getAcceptoutputs()).toBe(true);
  });

  it("Check returns {property, reason} failures for bad input", async () => {
    const req = new rpc.CheckRequest()
      .setUrn(urn)
      .setOlds(struct({}))
      .setNews(struct({ message: "" }));
    const res = await unary<rpc.CheckRequest, rpc.CheckResponse>(client(), client().check, req);
    expect(res.getFailuresList().map((f) => f.toObject())).toEqual([
      { property: "message", reason: "message must be a non-empty string" },
    ]);
  });

  it("Check normalises good input", async () => {
    const req = new rpc.CheckRequest()
      .setUrn(urn)
      .setOlds(struct({}))
      .setNews(struct({ message: "hi", extra: 1 }));
    const res = await unary<rpc.CheckRequest, rpc.CheckResponse>(client(), client().check, req);
    expect(res.getFailuresList()).toEqual([]);
    expect(res.getInputs()?.toJavaScript()).toEqual({ message: "hi" });
  });

  it("Create makes the record and returns id and outputs", async () => {
    const req = new rpc.CreateRequest().setUrn(urn).setProperties(struct({ message: "hi" }));
    const res = await unary<rpc.CreateRequest, rpc.CreateResponse>(client(), client().create, req);
    id = res.getId();
    expect(id).toMatch(/^probe-[0-9a-f]{8}$/);
    expect(res.getProperties()?.toJavaScript()).toEqual({ message: "hi", length: 2, revision: 1 });
    expect(readProbeFile(statePath)).toEqual({ [id]: { message: "hi", revision: 1 } });
  });

  it("Diff reports changes only when the message differs", async () => {
    const diff = async (news: string) => {
      const req = new rpc.DiffRequest()
        .setId(id)
        .setUrn(urn)
        .setOlds(struct({ message: "hi", length: 2, revision: 1 }))
        .setNews(struct({ message: news }));
      return unary<rpc.DiffRequest, rpc.DiffResponse>(client(), client().diff, req);
    };
    expect((await diff("hi")).getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_NONE);
    const changed = await diff("hello");
    expect(changed.getChanges()).toBe(rpc.DiffResponse.DiffChanges.DIFF_SOME);
    expect(changed.getReplacesList()).toEqual([]);
  });

  it("Update changes the record in place", async () => {
    const req = new rpc.UpdateRequest()
      .setId(id)
      .setUrn(urn)
      .setOlds(struct({ message: "hi", length: 2, revision: 1 }))
      .setNews(struct({ message: "hello" }));
    const res = await unary<rpc.UpdateRequest, rpc.UpdateResponse>(client(), client().update, req);
    expect(res.getProperties()?.toJavaScript()).toEqual({ message: "hello", length: 5, revision: 2 });
  });

  it("Read returns current outputs and inputs (refresh, import)", async () => {
    const req = new rpc.ReadRequest()
      .setId(id)
      .setUrn(urn)
      .setProperties(struct({ message: "hi" }));
    const res = await unary<rpc.ReadRequest, rpc.ReadResponse>(client(), client().read, req);
    expect(res.getId()).toBe(id);
    expect(res.getProperties()?.toJavaScript()).toEqual({ message: "hello", length: 5, revision: 2 });
    expect(res.getInputs()?.toJavaScript()).toEqual({ message: "hello" });
  });

  it("Delete removes the record, and deleting it again succeeds", async () => {
    const req = new rpc.DeleteRequest()
      .setId(id)
      .setUrn(urn)
      .setProperties(struct({ message: "hello" }));
    await unary<rpc.DeleteRequest, Empty>(client(), client().delete, req);
    expect(readProbeFile(statePath)).toEqual({});
    await unary<rpc.DeleteRequest, Empty>(client(), client().delete, req);
  });

  it("Read of a deleted record returns no id, so refresh drops it", async () => {
    const req = new rpc.ReadRequest().setId(id).setUrn(urn).setProperties(struct({}));
    const res = await unary<rpc.ReadRequest, rpc.ReadResponse>(client(), client().read, req);
    expect(res.getId()).toBe("");
  });

  it("rejects a resource type it does not serve", async () => {
    const other = urn.replace(PROBE_TYPE, "persys:index:Other");
    const req = new rpc.CreateRequest().setUrn(other).setProperties(struct({ message: "x" }));
    const err = await unary<rpc.CreateRequest, rpc.CreateResponse>(client(), client().create, req).catch((e) => e);
    expect(err).toMatchObject({ code: status.UNKNOWN });
    expect(String(err.details)).toContain("unknown resource type persys:index:Other");
    expect(readProbeFile(statePath)).toEqual({});
  });
});
