import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** One replica's numbers for the per-container gauges. */
export interface ReplicaSample {
  readonly workload: string;
  readonly replica: string;
  readonly state: string;
  readonly cpuMillicores: number;
  readonly memoryBytes: number;
  readonly restarts: number;
}

/**
 * The agent's Prometheus metrics (namespace `persys_agent`), on a registry of its own so several
 * agents can live in one process (tests). Per-container gauges are computed at scrape time from the
 * replicas the agent holds, so a deleted replica's series disappear with it.
 */
export class AgentMetrics {
  readonly registry = new Registry();
  readonly applies: Counter<"result">;
  readonly applySeconds: Histogram<never>;
  readonly deletes: Counter<"result">;
  readonly pulls: Counter<"result">;
  readonly restarts: Counter<never>;
  readonly orphansRemoved: Counter<never>;
  readonly heartbeats: Counter<"result">;
  readonly registrations: Counter<"result">;
  readonly dockerEvents: Counter<never>;

  constructor(options: { nodeId: string; replicas: () => readonly ReplicaSample[]; runtimeReady: () => boolean }) {
    const r = this.registry;
    r.setDefaultLabels({ node: options.nodeId });
    collectDefaultMetrics({ register: r, prefix: "persys_agent_process_" });
    this.applies = new Counter({
      name: "persys_agent_applies_total",
      help: "ApplyWorkload calls by result (applied, skipped, rejected).",
      labelNames: ["result"],
      registers: [r],
    });
    this.applySeconds = new Histogram({
      name: "persys_agent_converge_seconds",
      help: "Time from an accepted apply to the replica reaching its desired state (or failing).",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 120],
      registers: [r],
    });
    this.deletes = new Counter({
      name: "persys_agent_deletes_total",
      help: "Replica removals by result.",
      labelNames: ["result"],
      registers: [r],
    });
    this.pulls = new Counter({
      name: "persys_agent_image_pulls_total",
      help: "Image pulls by result (pulled, not_found, failed).",
      labelNames: ["result"],
      registers: [r],
    });
    this.restarts = new Counter({
      name: "persys_agent_restarts_total",
      help: "Containers the agent restarted by their restart policy after a stop Docker does not undo.",
      registers: [r],
    });
    this.orphansRemoved = new Counter({
      name: "persys_agent_orphans_removed_total",
      help: "Persys-labelled containers without a desired replica that were removed.",
      registers: [r],
    });
    this.heartbeats = new Counter({
      name: "persys_agent_heartbeats_total",
      help: "Heartbeats by result (ok, not_found, error).",
      labelNames: ["result"],
      registers: [r],
    });
    this.registrations = new Counter({
      name: "persys_agent_registrations_total",
      help: "RegisterNode calls by result.",
      labelNames: ["result"],
      registers: [r],
    });
    this.dockerEvents = new Counter({
      name: "persys_agent_docker_events_total",
      help: "Container events received from Docker.",
      registers: [r],
    });
    new Gauge({
      name: "persys_agent_runtime_ready",
      help: "1 when the container runtime answers and has disk space (node condition RuntimeReady).",
      registers: [r],
      collect() {
        this.set(options.runtimeReady() ? 1 : 0);
      },
    });
    new Gauge({
      name: "persys_agent_replicas",
      help: "Replicas held by the agent, by state.",
      labelNames: ["state"],
      registers: [r],
      collect() {
        this.reset();
        const counts = new Map<string, number>();
        for (const s of options.replicas()) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
        for (const [state, n] of counts) this.set({ state }, n);
      },
    });
    new Gauge({
      name: "persys_agent_container_cpu_millicores",
      help: "Measured CPU use of a replica's container (Docker stats), in millicores.",
      labelNames: ["workload", "replica"],
      registers: [r],
      collect() {
        this.reset();
        for (const s of options.replicas()) this.set({ workload: s.workload, replica: s.replica }, s.cpuMillicores);
      },
    });
    new Gauge({
      name: "persys_agent_container_memory_bytes",
      help: "Measured memory working set of a replica's container (Docker stats).",
      labelNames: ["workload", "replica"],
      registers: [r],
      collect() {
        this.reset();
        for (const s of options.replicas()) this.set({ workload: s.workload, replica: s.replica }, s.memoryBytes);
      },
    });
    new Gauge({
      name: "persys_agent_container_restarts",
      help: "Runtime restarts of a replica's current container.",
      labelNames: ["workload", "replica"],
      registers: [r],
      collect() {
        this.reset();
        for (const s of options.replicas()) this.set({ workload: s.workload, replica: s.replica }, s.restarts);
      },
    });
  }
}
