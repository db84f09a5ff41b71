import type { ComposeProject, ComposeService } from "./compose-model.js";

/** What one replica of a compose workload reserves on its node. */
export interface StackResources {
  readonly cpuMillicores: number;
  readonly memoryMib: number;
  readonly diskGib: number;
}

/**
 * What one service asks for on one dimension: its reservation when it sets one, else its limit
 * (`deploy.resources`, or the legacy `cpus` / `mem_limit`), times its replicas.
 */
export function serviceResources(s: ComposeService): { cpuMillicores: number; memoryMib: number } {
  const cpus = s.reservations.cpus || s.limits.cpus;
  const memory = s.reservations.memoryBytes || s.limits.memoryBytes;
  return {
    cpuMillicores: Math.ceil(cpus * 1000) * s.replicas,
    memoryMib: Math.ceil(memory / 1_048_576) * s.replicas,
  };
}

/**
 * The default resources of a compose workload: the sum over its enabled services of
 * `serviceResources`. The whole stack is one replica, placed on one node, so the scheduler checks
 * this sum against a single node. Services without resources add nothing.
 */
export function stackResources(project: ComposeProject): StackResources {
  let cpu = 0;
  let memory = 0;
  for (const s of project.services) {
    const r = serviceResources(s);
    cpu += r.cpuMillicores;
    memory += r.memoryMib;
  }
  return { cpuMillicores: cpu, memoryMib: memory, diskGib: 0 };
}

/** Host ports the stack publishes (the scheduler's ports-free filter). */
export function stackHostPorts(project: ComposeProject): { port: number; protocol: "tcp" | "udp" }[] {
  return project.services.flatMap((s) =>
    s.ports.filter((p) => p.published > 0).map((p) => ({ port: p.published, protocol: p.protocol })),
  );
}
