/**
 * Child process of the fleet benchmark: runs a `FakeAgentControl` (counts only) so the fleet process
 * is measured alone, tracks each node's heartbeat gaps, and on request plays the control plane's
 * AgentService client (ApplyWorkload with `persys-node-id`) at a given rate. Speaks over IPC:
 *   → {type: "ready", id: 0, address}
 *   ← {id, type: "stats"}                                                     → {id, type: "stats", ...}
 *   ← {id, type: "apply", endpoint, nodeIds, count, ratePerSec, concurrency}  → {id, type: "applied", ...}
 */
import { connectAgent } from "./agent-caller.js";
import { assignmentRequest } from "./apply-request.js";
import { FakeAgentControl } from "./fake-agent-control.js";

type Request = { id: number } & (
  | { type: "stats" }
  | { type: "apply"; endpoint: string; nodeIds: string[]; count: number; ratePerSec: number; concurrency: number }
);

const fake = await FakeAgentControl.start({ recordAll: false, heartbeatIntervalSeconds: 5 });
const last = new Map<string, number>();
const maxGap = new Map<string, number>();
let windowStart = Date.now();
let cpuStart = process.cpuUsage();
let buckets = new Map<number, number>();

fake.onHeartbeat = (req) => {
  const now = Date.now();
  const prev = last.get(req.nodeId);
  if (prev !== undefined) maxGap.set(req.nodeId, Math.max(maxGap.get(req.nodeId) ?? 0, now - prev));
  last.set(req.nodeId, now);
  const b = Math.floor((now - windowStart) / 100);
  buckets.set(b, (buckets.get(b) ?? 0) + 1);
};

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function stats() {
  const gaps = [...maxGap.values()];
  const counts = [...buckets.values()];
  const windowMs = Date.now() - windowStart;
  const s = {
    type: "stats",
    heartbeats: fake.heartbeatCount,
    registrations: fake.registrationCount,
    nodes: fake.nodes.size,
    windowMs,
    maxGapP50Ms: percentile(gaps, 50),
    maxGapP99Ms: percentile(gaps, 99),
    maxGapMaxMs: percentile(gaps, 100),
    bucket100msMean: counts.length ? counts.reduce((a, b) => a + b, 0) / Math.max(1, Math.floor(windowMs / 100)) : 0,
    bucket100msMax: counts.length ? Math.max(...counts) : 0,
    cpuShare: Number(
      ((process.cpuUsage(cpuStart).user + process.cpuUsage(cpuStart).system) / 1000 / Math.max(1, windowMs)).toFixed(3),
    ),
  };
  cpuStart = process.cpuUsage();
  maxGap.clear();
  buckets = new Map();
  windowStart = Date.now();
  return s;
}

async function apply(r: Extract<Request, { type: "apply" }>) {
  const channel = connectAgent(r.endpoint, { timeoutMs: 30_000 });
  const callers = new Map(r.nodeIds.map((id) => [id, channel.forNode(id)]));
  const started = Date.now();
  let next = 0;
  let failed = 0;
  let skipped = 0;
  const latencies: number[] = [];
  const worker = async () => {
    while (next < r.count) {
      const i = next++;
      const due = started + (i * 1000) / r.ratePerSec;
      if (due > Date.now()) await new Promise((ok) => setTimeout(ok, due - Date.now()));
      const nodeId = r.nodeIds[i % r.nodeIds.length]!;
      const sent = Date.now();
      const res = await callers
        .get(nodeId)!
        .apply(assignmentRequest({ workloadId: `w${i}`, nodeId, resources: { cpuMillicores: 100, memoryMiB: 128 } }))
        .catch(() => undefined);
      latencies.push(Date.now() - sent);
      if (!res?.applied) failed++;
      if (res?.skipped) skipped++;
    }
  };
  await Promise.all(Array.from({ length: r.concurrency }, worker));
  const ms = Date.now() - started;
  channel.close();
  return {
    type: "applied",
    count: r.count,
    failed,
    skipped,
    ms,
    perSec: Math.round((r.count * 1000) / ms),
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
  };
}

process.on("message", (m: Request) => {
  if (m.type === "stats") process.send!({ ...stats(), id: m.id });
  else if (m.type === "apply") void apply(m).then((res) => process.send!({ ...res, id: m.id }));
});
process.on("disconnect", () => {
  fake.close();
  process.exit(0);
});
process.send!({ type: "ready", id: 0, address: fake.address });
