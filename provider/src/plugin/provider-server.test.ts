/**
 * The gRPC service's secret marking, in process: properties a handler declares always secret leave
 * with Pulumi's secret signature in check, create, read and update responses (and, after a
 * Configure without `acceptSecrets`, nothing is wrapped).
 */
import pb from "@pulumi/pulumi/proto/provider_pb.js";
import structpb from "google-protobuf/google/protobuf/struct_pb.js";
import { describe, expect, it } from "vitest";
import { SECRET_SIG, SIG_KEY } from "./property-values.js";
import { type ResourceHandler, resourceProviderService } from "./provider-server.js";

const { Struct } = structpb;
const struct = (value: Record<string, unknown>) => Struct.fromJavaScript(value as never);
const js = (s: structpb.Struct | undefined) => (s?.toJavaScript() ?? {}) as Record<string, unknown>;
const secret = (value: unknown) => ({ [SIG_KEY]: SECRET_SIG, value });
const urn = "urn:pulumi:dev::proj::persys:index:Secret::db";

const handler: ResourceHandler = {
  version: "0.0.0",
  schema: "{}",
  configure: async () => {},
  check: async (_urn, _olds, news) => ({ inputs: news, failures: [] }),
  diff: async () => ({ changes: false, replaces: [], deleteBeforeReplace: false, detailedDiff: {} }),
  create: async (_urn, news) => ({ id: "db", outs: { ...news, version: 1 } }),
  read: async (_urn, id, props) => ({ outs: props, inputs: { name: id, data: props.data } }),
  update: async (_urn, _id, _olds, news) => ({ ...news, version: 2 }),
  delete: async () => {},
  invoke: async () => ({ result: {}, failures: [] }),
  secretProperties: (u) => (u.includes("persys:index:Secret") ? ["data"] : []),
};

/** Calls one unary method of the service as grpc-js would. */
function call<Res>(service: Record<string, unknown>, method: string, request: unknown): Promise<Res> {
  return new Promise((ok, fail) =>
    (service[method] as (c: unknown, cb: (e: unknown, r: Res) => void) => void)({ request }, (e, r) =>
      e ? fail(e) : ok(r),
    ),
  );
}

describe("resourceProviderService: always-secret properties", () => {
  const plain = { name: "db", data: { password: "p" } };

  it("check, create, read and update mark data secret although it arrived plain", async () => {
    const service = resourceProviderService(handler) as Record<string, unknown>;
    const checked = await call<pb.CheckResponse>(
      service,
      "check",
      new pb.CheckRequest().setUrn(urn).setNews(struct(plain)).setOlds(struct({})),
    );
    expect(js(checked.getInputs())).toEqual({ name: "db", data: secret({ password: "p" }) });
    const created = await call<pb.CreateResponse>(
      service,
      "create",
      new pb.CreateRequest().setUrn(urn).setProperties(struct(plain)),
    );
    expect(js(created.getProperties())).toEqual({ name: "db", data: secret({ password: "p" }), version: 1 });
    const read = await call<pb.ReadResponse>(
      service,
      "read",
      new pb.ReadRequest().setUrn(urn).setId("db").setProperties(struct(plain)),
    );
    expect(js(read.getProperties()).data).toEqual(secret({ password: "p" }));
    expect(js(read.getInputs()).data).toEqual(secret({ password: "p" }));
    const updated = await call<pb.UpdateResponse>(
      service,
      "update",
      new pb.UpdateRequest().setUrn(urn).setId("db").setOlds(struct(plain)).setNews(struct(plain)),
    );
    expect(js(updated.getProperties()).data).toEqual(secret({ password: "p" }));
  });

  it("other types keep only the secrets they were sent", async () => {
    const service = resourceProviderService(handler) as Record<string, unknown>;
    const created = await call<pb.CreateResponse>(
      service,
      "create",
      new pb.CreateRequest()
        .setUrn("urn:pulumi:dev::proj::persys:index:Container::web")
        .setProperties(struct({ env: secret({ A: "1" }), image: "x" })),
    );
    expect(js(created.getProperties())).toEqual({ env: secret({ A: "1" }), image: "x", version: 1 });
  });

  it("after Configure without acceptSecrets nothing is wrapped", async () => {
    const service = resourceProviderService(handler) as Record<string, unknown>;
    await call(service, "configure", new pb.ConfigureRequest().setAcceptsecrets(false).setArgs(struct({})));
    const created = await call<pb.CreateResponse>(
      service,
      "create",
      new pb.CreateRequest().setUrn(urn).setProperties(struct(plain)),
    );
    expect(js(created.getProperties())).toEqual({ ...plain, version: 1 });
  });
});
