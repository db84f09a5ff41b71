import { hostname } from "node:os";
import { type ConfigSources, invalid, loadConfig } from "@persys/schema";
import { z } from "zod";

const hostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, "must be host:port, e.g. 127.0.0.1:7071")
  .refine((value) => Number(value.slice(value.lastIndexOf(":") + 1)) < 65536, "port must be 0..65535");

const nodeId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/, "must be 1-253 of [A-Za-z0-9._-], starting alphanumeric");

const label = z.string().regex(/^[^=\s]+=[^\s]*$/, "must be key=value");

const resources = z
  .object({
    cpuMillicores: z.number().int().min(0).optional(),
    memoryMib: z.number().int().min(0).optional(),
    diskGib: z.number().int().min(0).optional(),
  })
  .strict();

const dockerDefaults = {
  enabled: true,
  socket: "/var/run/docker.sock",
  pullTimeoutSeconds: 300,
  logMaxSizeMib: 10,
  logMaxFiles: 3,
};

const vmDefaults = {
  enabled: false,
  uri: "qemu:///system",
  storageDir: "",
  imagesDir: "",
  defaultNetwork: "default",
  rebootTimeoutSeconds: 60,
  pools: { base: "persys-base", disks: "persys-disks" },
  probe: { kernel: "", initrd: "" },
};

export const agentConfigSchema = z
  .object({
    node: z
      .object({
        /** The node's name in the cluster. Default: the host name. */
        id: nodeId.optional(),
        /** Node labels as `key=value` (env and flags: comma-separated), matched by placement rules. */
        labels: z.array(label).default([]),
        /** Sent with the registration (Go field `cluster_id`). */
        clusterId: z.string().default(""),
      })
      .strict()
      .default({ labels: [], clusterId: "" }),
    controlPlane: z
      .object({
        /** host:port of the control plane's AgentControl (gRPC); tried in order, the next on failure. */
        endpoints: z.array(hostPort).min(1, "at least one control plane endpoint").default(["127.0.0.1:7070"]),
        /** Deadline of each register/heartbeat call. */
        callTimeoutMs: z.number().int().min(100).default(10_000),
      })
      .strict()
      .default({ endpoints: ["127.0.0.1:7070"], callTimeoutMs: 10_000 }),
    listen: z
      .object({
        /** Where the agent serves persys.agent.v1.AgentService and persys.api.v1.NodeLogService. */
        grpc: hostPort.default("127.0.0.1:7071"),
        /** Where the agent serves /metrics (Prometheus) and /healthz. */
        metrics: hostPort.default("127.0.0.1:7072"),
      })
      .strict()
      .default({ grpc: "127.0.0.1:7071", metrics: "127.0.0.1:7072" }),
    /** host:port the control plane dials. Default: the gRPC listen address (its bound port). */
    advertiseEndpoint: hostPort.optional(),
    /** Folder of the agent's durable state (SQLite) — one per agent. */
    stateDir: z.string().min(1).default("/var/lib/persys-agent"),
    runtimes: z
      .object({
        docker: z
          .object({
            enabled: z.boolean().default(true),
            /** Unix socket of the Docker Engine API. */
            socket: z.string().min(1).default("/var/run/docker.sock"),
            /** Give up an image pull after this long (IMAGE_PULL_FAILED). */
            pullTimeoutSeconds: z.number().int().min(1).default(300),
            /** Rotate each container's json-file log at this size; 0 keeps the daemon's log settings. */
            logMaxSizeMib: z.number().int().min(0).default(10),
            /** Rotated log files kept per container. */
            logMaxFiles: z.number().int().min(1).default(3),
          })
          .strict()
          .default(dockerDefaults),
        vm: z
          .object({
            /** Run VM replicas through libvirt (needs libvirtd, QEMU, qemu-img, genisoimage or xorriso). */
            enabled: z.boolean().default(false),
            /** libvirt connection URI. */
            uri: z.string().min(1).default("qemu:///system"),
            /** Replica disks, seeds and console logs. Default: `<stateDir>/vm`. */
            storageDir: z.string().default(""),
            /** Base images registered by name. Default: `<storageDir>/images`. */
            imagesDir: z.string().default(""),
            /** libvirt network of a NIC that names none. */
            defaultNetwork: z.string().min(1).default("default"),
            /** How long a guest has to reboot on an ACPI reboot request (RestartWorkload reboot mode) before it is reset. */
            rebootTimeoutSeconds: z.number().int().min(1).default(60),
            /**
             * libvirt storage pools (dir pools, defined under `<storageDir>/pools/` when missing): `base` holds
             * base images imported once by content, `disks` the overlays, data disks and seeds of replicas.
             */
            pools: z
              .object({
                base: z.string().min(1).default("persys-base"),
                disks: z.string().min(1).default("persys-disks"),
              })
              .strict()
              .default({ base: "persys-base", disks: "persys-disks" }),
            /** The guest the accelerator probe boots (kernel + initrd printing PERSYS-FAST-GUEST-UP). Empty: no probe, no `kvm`. */
            probe: z
              .object({ kernel: z.string().default(""), initrd: z.string().default("") })
              .strict()
              .default({ kernel: "", initrd: "" }),
          })
          .strict()
          .default(vmDefaults),
      })
      .strict()
      .default({ docker: dockerDefaults, vm: vmDefaults }),
    heartbeat: z
      .object({
        /** Overrides the interval the control plane returns at registration (fractions allowed). */
        intervalSeconds: z.number().positive().optional(),
        /** Delay of the extra heartbeat sent after a replica changes state (coalesces bursts). */
        reportDebounceMs: z.number().int().min(0).default(5),
      })
      .strict()
      .default({ reportDebounceMs: 5 }),
    resources: z
      .object({
        /** Reported totals. Default: measured (CPUs × 1000, RAM, the state dir's file system). */
        capacity: resources.default({}),
        /** What Persys may reserve. Default: capacity minus `reserve`. */
        allocatable: resources.default({}),
        /** Kept for the system when allocatable is derived. */
        reserve: z
          .object({
            cpuMillicores: z.number().int().min(0).default(100),
            memoryMib: z.number().int().min(0).default(256),
            diskGib: z.number().int().min(0).default(2),
          })
          .strict()
          .default({ cpuMillicores: 100, memoryMib: 256, diskGib: 2 }),
        /** Below this much free disk (state dir, Docker root) the runtime is reported not ready. */
        minFreeDiskMib: z.number().int().min(0).default(512),
      })
      .strict()
      .default({
        capacity: {},
        allocatable: {},
        reserve: { cpuMillicores: 100, memoryMib: 256, diskGib: 2 },
        minFreeDiskMib: 512,
      }),
    gc: z
      .object({
        /** A Persys-labelled container of this node with no desired replica is removed after this long. */
        orphanGraceSeconds: z.number().min(0).default(60),
        /** How often containers are scanned for orphans. */
        intervalSeconds: z.number().positive().default(15),
      })
      .strict()
      .default({ orphanGraceSeconds: 60, intervalSeconds: 15 }),
    usage: z
      .object({
        /** How often each running container's CPU and memory are sampled (Docker stats API). */
        statsIntervalSeconds: z.number().positive().default(10),
      })
      .strict()
      .default({ statsIntervalSeconds: 10 }),
    log: z
      .object({ level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info") })
      .strict()
      .default({ level: "info" }),
    tls: z
      .object({
        /** The node's certificate (CN `node:<id>`, O `agent`) from the cluster CA. Default: `<stateDir>/tls/node.crt`. */
        certFile: z.string().default(""),
        /** Its private key (mode 0600). Default: `<stateDir>/tls/node.key`. */
        keyFile: z.string().default(""),
        /** The cluster CA: the control plane is verified against it. Default: `<stateDir>/tls/ca.crt`. */
        caFile: z.string().default(""),
        /** One-time join token (`persysctl node join-token create`): used when there is no certificate yet. */
        joinToken: z.string().default(""),
        /** `sha256:<hex>` of the cluster CA's public key, to fetch and trust the CA when joining without `caFile`. */
        caCertHash: z.string().default(""),
      })
      .strict()
      .default({ certFile: "", keyFile: "", caFile: "", joinToken: "", caCertHash: "" }),
    /** Plaintext both ways and no caller checks (development only; logged as a warning on every start). */
    insecure: z.boolean().default(false),
  })
  .strict();

/** The agent's configuration as loaded (defaults applied, node id resolved). */
export type AgentConfig = z.output<typeof agentConfigSchema> & { node: { id: string } };

/** Environment variables of the agent start with this (`PERSYS_AGENT_NODE_ID`, ...). */
export const AGENT_ENV_PREFIX = "PERSYS_AGENT";

/**
 * Loads the agent configuration from defaults, a YAML/JSON file, `PERSYS_AGENT_*` environment and
 * flags (later wins), validated as a whole: every problem is reported at once as INVALID_CONFIG.
 * The node id defaults to the host name (when that is not a valid node id, the error says so).
 */
export function loadAgentConfig(sources: ConfigSources = {}): AgentConfig {
  const config = loadConfig(agentConfigSchema, { envPrefix: AGENT_ENV_PREFIX, ...sources });
  const id = config.node.id ?? hostname();
  if (!nodeId.safeParse(id).success) {
    throw invalid(
      "INVALID_CONFIG",
      [{ path: "node.id", reason: `the host name "${id}" is not a valid node id; set node.id (--node-id)` }],
      "config",
    );
  }
  return { ...config, node: { ...config.node, id } };
}

/** The `key=value` labels of the configuration as a map (later duplicates win). */
export function labelMap(labels: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of labels) {
    const at = entry.indexOf("=");
    out[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return out;
}
