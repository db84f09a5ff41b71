import { type api, readCompose, stackHostPorts } from "@persys/schema";

/** The inline compose project of a workload, when it has one that parses (else undefined). */
export function inlineProject(workload: api.Workload) {
  const spec = workload.spec;
  if (spec?.$case !== "compose" || spec.value.source?.$case !== "inlineYaml") return undefined;
  const result = readCompose({
    file: "inline",
    content: spec.value.source.value,
    env: spec.value.env,
    profiles: spec.value.profiles,
  });
  return result.ok ? result.project : undefined;
}

/**
 * How a diagnosis of a compose workload starts: each replica is a whole stack, placed on one node
 * with the sum of its services' resources (`compose stack of 3 services (db, api, web) on one node,
 * needing 1000m CPU, 256 MiB memory: `). Empty for other kinds.
 */
export function stackDiagnosisPrefix(workload: api.Workload): string {
  if (workload.spec?.$case !== "compose") return "";
  const r = workload.resources ?? { cpuMillicores: 0, memoryMib: 0, diskGib: 0 };
  const needs = `needing ${r.cpuMillicores}m CPU, ${r.memoryMib} MiB memory`;
  const project = inlineProject(workload);
  if (!project) return `compose stack from git on one node, ${needs}: `;
  const names = project.services.map((s) => s.name);
  return `compose stack of ${names.length} service${names.length === 1 ? "" : "s"} (${names.join(", ")}) on one node, ${needs}: `;
}

/** Host ports an inline compose stack publishes (a git stack's are only known on the node). */
export function composeHostPorts(workload: api.Workload): { port: number; protocol: "tcp" | "udp" }[] {
  const project = inlineProject(workload);
  return project ? stackHostPorts(project) : [];
}

/** `path: message` of each key an inline compose file uses that Persys ignores (docs/compose.md). */
export function composeWarnings(workload: api.Workload): string[] {
  return (inlineProject(workload)?.warnings ?? []).map((w) => `${w.path}: ${w.message}`);
}
