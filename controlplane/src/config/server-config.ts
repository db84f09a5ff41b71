import { type ConfigSources, loadConfig } from "@persys/schema";
import { z } from "zod";

const hostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, "must be host:port, e.g. 127.0.0.1:7070")
  .refine((value) => {
    const port = Number(value.slice(value.lastIndexOf(":") + 1));
    return port >= 0 && port < 65536;
  }, "port must be 0..65535 (0 picks a free port)");

const url = z.string().refine((value) => URL.canParse(value), "must be a URL, e.g. http://127.0.0.1:2379");

/** Where desired state lives: etcd in production, the embedded store for single-node clusters. */
const stateConfig = z
  .object({
    kind: z.enum(["embedded", "etcd"]).default("embedded"),
    endpoints: z.array(url).default([]),
    prefix: z.string().startsWith("/", "must start with /").default("/persys/"),
  })
  .strict()
  .refine((state) => state.kind !== "etcd" || state.endpoints.length > 0, {
    path: ["endpoints"],
    message: "at least one etcd endpoint is required when state.kind is etcd",
  });

/** Where operational data (events, usage series) lives: Redis in production, embedded otherwise. */
const eventsConfig = z
  .object({
    kind: z.enum(["embedded", "redis"]).default("embedded"),
    url: z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional(),
    prefix: z.string().default("persys:"),
  })
  .strict()
  .refine((events) => events.kind !== "redis" || events.url !== undefined, {
    path: ["url"],
    message: "a Redis URL is required when events.kind is redis",
  });

export const serverConfigSchema = z
  .object({
    /** This server's name in leader election and logs (default: hostname-pid). */
    id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must be letters, digits, '.', '_' or '-'")
      .optional(),
    /** Folder for the embedded stores, the cluster CA and other local state. */
    dataDir: z.string().min(1).default("/var/lib/persys"),
    listen: z
      .object({
        grpc: hostPort.default("127.0.0.1:7070"),
        http: hostPort.default("127.0.0.1:7080"),
      })
      .strict()
      .default({ grpc: "127.0.0.1:7070", http: "127.0.0.1:7080" }),
    state: stateConfig.default({ kind: "embedded", endpoints: [], prefix: "/persys/" }),
    events: eventsConfig.default({ kind: "embedded", prefix: "persys:" }),
    nodes: z
      .object({
        /** Seconds a node stays Ready without a heartbeat (its store lease TTL). */
        leaseTtlSeconds: z.number().int().min(1).max(3600).default(10),
        /** Seconds after which a NotReady node's replicas are re-placed. */
        lostAfterSeconds: z.number().int().min(1).max(86_400).default(30),
      })
      .strict()
      .default({ leaseTtlSeconds: 10, lostAfterSeconds: 30 }),
    leader: z
      .object({
        /** Seconds before a dead leader's key expires and another server takes over. */
        ttlSeconds: z.number().int().min(2).max(300).default(10),
      })
      .strict()
      .default({ ttlSeconds: 10 }),
    scheduler: z
      .object({
        strategy: z.enum(["least-allocated", "bin-pack"]).default("least-allocated"),
      })
      .strict()
      .default({ strategy: "least-allocated" }),
    reconciler: z
      .object({
        /** Workloads and nodes reconciled at once. */
        concurrency: z.number().int().min(1).max(4096).default(64),
        /** Pushes to agents in flight at once. */
        pushConcurrency: z.number().int().min(1).max(4096).default(256),
        /** Every workload and node is reconciled at least this often (seconds). */
        resyncSeconds: z.number().int().min(1).max(3600).default(30),
      })
      .strict()
      .default({ concurrency: 64, pushConcurrency: 256, resyncSeconds: 30 }),
    intelligence: z
      .object({
        /** Resolution of the usage and reservation series forecasts read (ms between points per series). */
        sampleIntervalMs: z.number().int().min(100).max(3_600_000).default(10_000),
        /** Base URL of an OpenAI-compatible endpoint that may reword answers of Ask (none: the rules' wording). */
        modelUrl: url.optional(),
        /** Model name sent to that endpoint. */
        modelName: z.string().min(1).default("gpt-4o-mini"),
        /** Bearer token for that endpoint (prefer the environment variable). */
        modelApiKey: z.string().min(1).optional(),
      })
      .strict()
      .default({ sampleIntervalMs: 10_000, modelName: "gpt-4o-mini" }),
    automation: z
      .object({
        /** How often the leader evaluates every policy (ms). */
        evaluateIntervalMs: z.number().int().min(100).max(3_600_000).default(15_000),
      })
      .strict()
      .default({ evaluateIntervalMs: 15_000 }),
    log: z
      .object({ level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info") })
      .strict()
      .default({ level: "info" }),
    /** Serve without TLS (development only; logged as a warning on every start). */
    insecure: z.boolean().default(false),
  })
  .strict();

export type ServerConfig = z.output<typeof serverConfigSchema>;

/** Loads the server configuration from defaults, file, `PERSYS_*` environment and flags. */
export function loadServerConfig(sources: ConfigSources = {}): ServerConfig {
  return loadConfig(serverConfigSchema, sources);
}
