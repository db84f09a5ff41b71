import { type ConfigSources, invalid, loadConfig } from "@persys/schema";
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

const userRoles = z.array(z.enum(["admin", "operator", "viewer"]));
const absolute = z.string().startsWith("/", "must be an absolute path");

const securityDefaults = {
  hostPathAllowList: ["/srv", "/mnt", "/data"],
  privilegedRoles: ["admin" as const],
  hostNetworkRoles: ["admin" as const],
  hostPathRoles: ["admin" as const],
  deviceRoles: ["admin" as const],
  serverCertHosts: [],
  certificateValidityHours: 720,
  issuer: "cluster-ca" as const,
};

/** Vault in production (docs/security.md): PKI for certificates, transit or KV v2 for secrets. */
const vaultConfig = z
  .object({
    /** e.g. https://vault.internal:8200. Unset: no Vault. */
    address: url.optional(),
    /** `token` (vault.token, or env PERSYS_VAULT_TOKEN) or `approle` (roleId + secretIdFile). */
    authMethod: z.enum(["token", "approle"]).default("token"),
    token: z.string().min(1).optional(),
    roleId: z.string().min(1).optional(),
    /** File holding the AppRole secret id (kept out of config and environment). */
    secretIdFile: z.string().min(1).optional(),
    approleMount: z.string().min(1).default("approle"),
    /** CA file to verify Vault with. */
    caFile: z.string().min(1).optional(),
    namespace: z.string().min(1).optional(),
    pkiMount: z.string().min(1).default("pki"),
    /** PKI roles are `<prefix><persys role>` (`persys-control-plane`, `persys-agent`, `persys-admin`, ...). */
    pkiRolePrefix: z.string().default("persys-"),
    kvMount: z.string().min(1).default("secret"),
    transitMount: z.string().min(1).default("transit"),
    transitKey: z.string().min(1).default("persys-secrets"),
  })
  .strict()
  .refine((v) => v.authMethod !== "approle" || (v.roleId !== undefined && v.secretIdFile !== undefined), {
    path: ["roleId"],
    message: "approle login needs vault.roleId and vault.secretIdFile",
  });

const vaultDefaults = {
  authMethod: "token" as const,
  approleMount: "approle",
  pkiMount: "pki",
  pkiRolePrefix: "persys-",
  kvMount: "secret",
  transitMount: "transit",
  transitKey: "persys-secrets",
};

/** TLS, identities and the policy for dangerous specs (docs/security.md). */
const securityConfig = z
  .object({
    /** Host folders operators may bind-mount (subtrees included). */
    hostPathAllowList: z.array(absolute).default(securityDefaults.hostPathAllowList),
    /** Roles that may run privileged containers (empty: nobody). */
    privilegedRoles: userRoles.default(securityDefaults.privilegedRoles),
    /** Roles that may use the host network. */
    hostNetworkRoles: userRoles.default(securityDefaults.hostNetworkRoles),
    /** Roles that may bind-mount host paths outside the allow-list. */
    hostPathRoles: userRoles.default(securityDefaults.hostPathRoles),
    /** Roles that may pass host devices. */
    deviceRoles: userRoles.default(securityDefaults.deviceRoles),
    /** Extra DNS names or IPs in the server certificate (the listen hosts, localhost and the host name are always in). */
    serverCertHosts: z.array(z.string().min(1)).default([]),
    /** Lifetime of server, control-plane and agent certificates; they are renewed when a third is left. */
    certificateValidityHours: z.number().int().min(1).max(87_600).default(720),
    /** Who signs certificates: the cluster CA in `<dataDir>/pki`, or Vault PKI (`vault.*`). */
    issuer: z.enum(["cluster-ca", "vault"]).default("cluster-ca"),
    /** PEM files to serve with instead of issued certificates (re-read every minute). */
    certFile: z.string().min(1).optional(),
    keyFile: z.string().min(1).optional(),
    caFile: z.string().min(1).optional(),
  })
  .strict()
  .refine((s) => (s.certFile === undefined) === (s.keyFile === undefined), {
    path: ["keyFile"],
    message: "certFile and keyFile go together",
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
        /**
         * Workloads and nodes reconciled at once. Each holds its slot across its store commit, so
         * this bounds work in flight, not CPU: at 5,000 nodes 256 left the control plane waiting on
         * commits and 1,024 placed 11 % more per second (docs/scheduler-performance.md).
         */
        concurrency: z.number().int().min(1).max(4096).default(1024),
        /** Pushes to agents in flight at once. */
        pushConcurrency: z.number().int().min(1).max(4096).default(256),
        /** Every workload and node is reconciled at least this often (seconds). */
        resyncSeconds: z.number().int().min(1).max(3600).default(30),
      })
      .strict()
      .default({ concurrency: 1024, pushConcurrency: 256, resyncSeconds: 30 }),
    intelligence: z
      .object({
        /** Resolution of the usage and reservation series forecasts read (ms between points per series). */
        sampleIntervalMs: z.number().int().min(100).max(3_600_000).default(10_000),
        /**
         * Points a second the usage and the reservation series may each write to the event store; past
         * it (large clusters) their resolution coarsens in whole multiples of sampleIntervalMs.
         */
        maxSamplesPerSecond: z.number().int().min(1).max(1_000_000).default(1_000),
        /** Base URL of an OpenAI-compatible endpoint that may reword answers of Ask (none: the rules' wording). */
        modelUrl: url.optional(),
        /** Model name sent to that endpoint. */
        modelName: z.string().min(1).default("gpt-4o-mini"),
        /** Bearer token for that endpoint (prefer the environment variable). */
        modelApiKey: z.string().min(1).optional(),
      })
      .strict()
      .default({ sampleIntervalMs: 10_000, maxSamplesPerSecond: 1_000, modelName: "gpt-4o-mini" }),
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
    security: securityConfig.default(securityDefaults),
    vault: vaultConfig.default(vaultDefaults),
    secrets: z
      .object({
        /**
         * Where secret values live: `local` (AES-256-GCM envelopes in the state store, data keys wrapped by
         * a KEK in `<dataDir>/secrets`), `vault-transit` (same envelopes, data keys from Vault transit),
         * `vault-kv` (values in Vault KV v2; the state store keeps references).
         */
        backend: z.enum(["local", "vault-transit", "vault-kv"]).default("local"),
      })
      .strict()
      .default({ backend: "local" }),
    /**
     * Serve without TLS and let calls without credentials act as an `admin` named `anonymous`
     * (development only; logged as a warning on every start). Tokens presented are still checked.
     */
    insecure: z.boolean().default(false),
  })
  .strict();

/** Settings that need Vault name it: checked here so the error names the field. */
function vaultNeeded(config: z.output<typeof serverConfigSchema>): { path: string; reason: string }[] {
  if (config.vault.address) return [];
  const problems: { path: string; reason: string }[] = [];
  if (config.security.issuer === "vault")
    problems.push({ path: "security.issuer", reason: "vault needs vault.address" });
  if (config.secrets.backend !== "local")
    problems.push({ path: "secrets.backend", reason: `${config.secrets.backend} needs vault.address` });
  return problems;
}

export type ServerConfig = z.output<typeof serverConfigSchema>;

/** Loads the server configuration from defaults, file, `PERSYS_*` environment and flags. */
export function loadServerConfig(sources: ConfigSources = {}): ServerConfig {
  const config = loadConfig(serverConfigSchema, sources);
  const problems = vaultNeeded(config);
  if (problems.length > 0) throw invalid("INVALID_CONFIG", problems, "config");
  return config;
}
