/**
 * The `pulumirpc.ResourceProvider` gRPC service over a {@link ResourceHandler}, with the message
 * classes generated into `@pulumi/pulumi/proto`.
 *
 * Why not `@pulumi/pulumi/provider`'s `main`: its server drops what the Persys resources need — the
 * provider configuration of `Configure` (it ignores the request), custom timeouts and the preview
 * flag of Create/Update/Delete, `detailedDiff`, the old inputs of Diff, the random seed of Check,
 * and engine logs for a resource. This server speaks the same protocol (port on the first stdout
 * line, 127.0.0.1, insecure loopback) and passes all of that through; the plugin still uses
 * `@pulumi/pulumi`'s generated protocol code and `Provider` vocabulary (docs/decisions/0007).
 */
import * as grpc from "@grpc/grpc-js";
// CommonJS modules whose exports Node's ESM loader cannot detect: import them whole.
import engineGrpc from "@pulumi/pulumi/proto/engine_grpc_pb.js";
import enginepb from "@pulumi/pulumi/proto/engine_pb.js";
import pluginpb from "@pulumi/pulumi/proto/plugin_pb.js";
import providerGrpc from "@pulumi/pulumi/proto/provider_grpc_pb.js";
import pb from "@pulumi/pulumi/proto/provider_pb.js";
import emptypb from "google-protobuf/google/protobuf/empty_pb.js";
import structpb from "google-protobuf/google/protobuf/struct_pb.js";
import type { InputsDiff } from "../resources/workload-diff.js";
import { type Props, unwrapProps, wrapProps } from "./property-values.js";

const { EngineClient } = engineGrpc;
const { ResourceProviderService } = providerGrpc;
const { Empty } = emptypb;
const { Struct } = structpb;
type Struct = structpb.Struct;

/** A `{property, reason}` check failure. */
export interface CheckFailure {
  readonly property: string;
  readonly reason: string;
}

/** Options of an operation: the resource's custom timeout and whether this is a preview. */
export interface OperationOptions {
  /** Milliseconds; undefined when the program set no custom timeout. */
  readonly timeoutMs: number | undefined;
  readonly preview: boolean;
  /** Writes a line into the engine's output for this resource. */
  readonly log: (message: string) => void;
}

/** Plain request data: secrets unwrapped, unknowns kept as `property-values.UNKNOWN`. */
export interface ResourceHandler {
  readonly version: string;
  readonly schema: string;
  configure(args: Props): Promise<void>;
  check(urn: string, olds: Props, news: Props, seed: Uint8Array): Promise<{ inputs: Props; failures: CheckFailure[] }>;
  diff(urn: string, id: string, oldInputs: Props, news: Props): Promise<InputsDiff>;
  create(urn: string, news: Props, options: OperationOptions): Promise<{ id: string; outs: Props }>;
  /** Undefined: the resource no longer exists. */
  read(urn: string, id: string, props: Props): Promise<{ outs: Props; inputs: Props } | undefined>;
  update(urn: string, id: string, olds: Props, news: Props, options: OperationOptions): Promise<Props>;
  delete(urn: string, id: string, props: Props, options: OperationOptions): Promise<void>;
  invoke(token: string, args: Props): Promise<{ result: Props; failures: CheckFailure[] }>;
  /**
   * Top-level properties of the URN's resource type that are always secret (the schema's
   * `"secret": true`): marked secret in check, create, read and update responses even when they
   * arrived plain.
   */
  secretProperties?(urn: string): readonly string[];
}

type Unary<Req, Res> = (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => void;

const toStruct = (props: Props) => Struct.fromJavaScript(props as never);
const fromStruct = (struct: Struct | undefined): Props => (struct?.toJavaScript() ?? {}) as Props;
const timeoutOf = (seconds: number) => (seconds > 0 ? seconds * 1000 : undefined);

/** Runs `work` and answers with its result, or with the error's message as the engine shows it. */
function handle<Req, Res>(work: (req: Req) => Promise<Res>): Unary<Req, Res> {
  return (call, callback) => {
    work(call.request).then(
      (res) => callback(null, res),
      (error: unknown) =>
        callback({
          code: grpc.status.UNKNOWN,
          details: error instanceof Error ? error.message : String(error),
        }),
    );
  };
}

function failuresOf(failures: readonly CheckFailure[]): pb.CheckFailure[] {
  return failures.map((f) => new pb.CheckFailure().setProperty(f.property).setReason(f.reason));
}

const diffKinds: Record<string, pb.PropertyDiff.Kind> = {
  ADD: pb.PropertyDiff.Kind.ADD,
  ADD_REPLACE: pb.PropertyDiff.Kind.ADD_REPLACE,
  DELETE: pb.PropertyDiff.Kind.DELETE,
  DELETE_REPLACE: pb.PropertyDiff.Kind.DELETE_REPLACE,
  UPDATE: pb.PropertyDiff.Kind.UPDATE,
  UPDATE_REPLACE: pb.PropertyDiff.Kind.UPDATE_REPLACE,
};

/** The service implementation; `engineAddress` (the plugin's first argument) enables resource logs. */
export function resourceProviderService(
  handler: ResourceHandler,
  engineAddress?: string,
): grpc.UntypedServiceImplementation {
  const engine = engineAddress ? new EngineClient(engineAddress, grpc.credentials.createInsecure()) : undefined;
  const logFor = (urn: string) => (message: string) => {
    if (!engine) {
      process.stderr.write(`${message}\n`);
      return;
    }
    const req = new enginepb.LogRequest().setSeverity(enginepb.LogSeverity.INFO).setMessage(message).setUrn(urn);
    engine.log(req, () => {});
  };
  // Until Configure says otherwise, answer as to an engine that accepts secrets (all current ones do).
  let acceptSecrets = true;
  /** The keys to mark secret in a response about `urn`: the request's secrets plus the type's. */
  const secretsFor = (urn: string, ...requestSecrets: Iterable<string>[]): string[] =>
    acceptSecrets
      ? [...new Set([...requestSecrets.flatMap((keys) => [...keys]), ...(handler.secretProperties?.(urn) ?? [])])]
      : [];
  const service: Record<string, Unary<never, unknown>> = {
    getPluginInfo: handle(async () => new pluginpb.PluginInfo().setVersion(handler.version)),
    getSchema: handle(async (req: pb.GetSchemaRequest) => {
      if (req.getVersion() !== 0) throw new Error(`unsupported schema version ${req.getVersion()}`);
      return new pb.GetSchemaResponse().setSchema(handler.schema);
    }),
    checkConfig: handle(async (req: pb.CheckRequest) => new pb.CheckResponse().setInputs(req.getNews())),
    diffConfig: handle(async () => new pb.DiffResponse().setChanges(pb.DiffResponse.DiffChanges.DIFF_UNKNOWN)),
    configure: handle(async (req: pb.ConfigureRequest) => {
      const fromVars: Props = {};
      for (const [key, value] of req.getVariablesMap().toArray()) fromVars[key.replace(/^persys:config:/, "")] = value;
      await handler.configure({ ...fromVars, ...unwrapProps(fromStruct(req.getArgs())).props });
      acceptSecrets = req.getAcceptsecrets();
      return new pb.ConfigureResponse().setAcceptsecrets(true).setSupportspreview(true).setAcceptresources(true);
    }),
    check: handle(async (req: pb.CheckRequest) => {
      const news = unwrapProps(fromStruct(req.getNews()));
      const result = await handler.check(
        req.getUrn(),
        unwrapProps(fromStruct(req.getOlds())).props,
        news.props,
        req.getRandomseed_asU8(),
      );
      return new pb.CheckResponse()
        .setInputs(toStruct(wrapProps(result.inputs, secretsFor(req.getUrn(), news.secretKeys))))
        .setFailuresList(failuresOf(result.failures));
    }),
    diff: handle(async (req: pb.DiffRequest) => {
      const olds = unwrapProps(fromStruct(req.getOldInputs() ?? req.getOlds())).props;
      const diff = await handler.diff(req.getUrn(), req.getId(), olds, unwrapProps(fromStruct(req.getNews())).props);
      const res = new pb.DiffResponse()
        .setChanges(diff.changes ? pb.DiffResponse.DiffChanges.DIFF_SOME : pb.DiffResponse.DiffChanges.DIFF_NONE)
        .setReplacesList([...diff.replaces])
        .setDeletebeforereplace(diff.deleteBeforeReplace)
        .setDiffsList(Object.keys(diff.detailedDiff).map((path) => /^[^.[]+/.exec(path)?.[0] ?? path))
        .setHasdetaileddiff(true);
      for (const [path, kind] of Object.entries(diff.detailedDiff)) {
        res.getDetaileddiffMap().set(path, new pb.PropertyDiff().setKind(diffKinds[kind]!).setInputdiff(true));
      }
      return res;
    }),
    create: handle(async (req: pb.CreateRequest) => {
      const news = unwrapProps(fromStruct(req.getProperties()));
      const options = { timeoutMs: timeoutOf(req.getTimeout()), preview: req.getPreview(), log: logFor(req.getUrn()) };
      const { id, outs } = await handler.create(req.getUrn(), news.props, options);
      return new pb.CreateResponse()
        .setId(id)
        .setProperties(toStruct(wrapProps(outs, secretsFor(req.getUrn(), news.secretKeys))));
    }),
    read: handle(async (req: pb.ReadRequest) => {
      const props = unwrapProps(fromStruct(req.getProperties()));
      const inputs = unwrapProps(fromStruct(req.getInputs()));
      const found = await handler.read(req.getUrn(), req.getId(), props.props);
      const res = new pb.ReadResponse();
      if (!found) return res.setId("");
      const secret = secretsFor(req.getUrn(), props.secretKeys, inputs.secretKeys);
      return res
        .setId(req.getId())
        .setProperties(toStruct(wrapProps(found.outs, secret)))
        .setInputs(toStruct(wrapProps(found.inputs, secret)));
    }),
    update: handle(async (req: pb.UpdateRequest) => {
      const news = unwrapProps(fromStruct(req.getNews()));
      const options = { timeoutMs: timeoutOf(req.getTimeout()), preview: req.getPreview(), log: logFor(req.getUrn()) };
      const olds = unwrapProps(fromStruct(req.getOlds())).props;
      const outs = await handler.update(req.getUrn(), req.getId(), olds, news.props, options);
      return new pb.UpdateResponse().setProperties(
        toStruct(wrapProps(outs, secretsFor(req.getUrn(), news.secretKeys))),
      );
    }),
    delete: handle(async (req: pb.DeleteRequest) => {
      const options = { timeoutMs: timeoutOf(req.getTimeout()), preview: false, log: logFor(req.getUrn()) };
      await handler.delete(req.getUrn(), req.getId(), unwrapProps(fromStruct(req.getProperties())).props, options);
      return new Empty();
    }),
    invoke: handle(async (req: pb.InvokeRequest) => {
      const { result, failures } = await handler.invoke(req.getTok(), unwrapProps(fromStruct(req.getArgs())).props);
      return new pb.InvokeResponse().setReturn(toStruct(wrapProps(result))).setFailuresList(failuresOf(failures));
    }),
    cancel: handle(async () => new Empty()),
  };
  return service as grpc.UntypedServiceImplementation;
}

/**
 * Serves `handler` as a provider plugin: binds 127.0.0.1 on an ephemeral port, prints the port as
 * the first line of stdout (the engine reads it) and keeps serving until the engine kills the
 * process. `argv[0]`, when it is not a flag, is the engine's address. Exits with status 1 when no
 * port can be bound.
 */
export async function serveResourceProvider(
  handler: ResourceHandler,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const engineAddress = argv[0] && !argv[0].startsWith("-") ? argv[0] : undefined;
  const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
  server.addService(ResourceProviderService, resourceProviderService(handler, engineAddress));
  try {
    const port = await new Promise<number>((ok, fail) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? fail(err) : ok(p))),
    );
    process.stdout.write(`${port}\n`);
  } catch (error) {
    process.stderr.write(`provider plugin failed to start: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
