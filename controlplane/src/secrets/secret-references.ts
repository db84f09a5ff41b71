import { createHash } from "node:crypto";
import { secretNamesOf } from "@persys/schema";
import type { ClusterState } from "../cluster/cluster-state.js";
import { splitAgentRevision, type WorkloadRecord, workloadOf } from "../cluster/records.js";

const namesByRecord = new WeakMap<WorkloadRecord, readonly string[]>();

/** The secrets a stored workload references (sorted), cached per record object. */
export function secretNamesOfRecord(record: WorkloadRecord): readonly string[] {
  let names = namesByRecord.get(record);
  if (!names) {
    names = secretNamesOf(workloadOf(record));
    namesByRecord.set(record, names);
  }
  return names;
}

/** Ids of the workloads (not being deleted) whose spec references the secret, sorted. */
export function workloadsUsingSecret(state: Pick<ClusterState, "workloads">, name: string): string[] {
  const out: string[] = [];
  for (const [id, held] of state.workloads) {
    if (held.value.deletionRequestedAt) continue;
    if (secretNamesOfRecord(held.value).includes(name)) out.push(id);
  }
  return out.sort();
}

/**
 * What the secrets of a workload add to its agent revision: `-s<hash>` of the referenced secrets'
 * names and versions (0 for a missing one), or "" when it references none. A new secret version
 * thus gives the replica a new agent revision (it is recreated, rolling); the value never enters it.
 */
export function secretRevisionSuffix(state: Pick<ClusterState, "secrets">, record: WorkloadRecord): string {
  const names = secretNamesOfRecord(record);
  if (names.length === 0) return "";
  const versions = names.map((n) => `${n}@${state.secrets.get(n)?.value.version ?? 0}`).join(",");
  return `-s${createHash("sha256").update(versions).digest("hex").slice(0, 8)}`;
}

/** An agent revision with the secrets' suffix on its recreate part (before any `+b<n>` reboot suffix). */
export function withSecretRevision(agentRevision: string, suffix: string): string {
  if (!suffix) return agentRevision;
  const { recreate, reboots } = splitAgentRevision(agentRevision);
  return reboots > 0 ? `${recreate}${suffix}+b${reboots}` : `${recreate}${suffix}`;
}
