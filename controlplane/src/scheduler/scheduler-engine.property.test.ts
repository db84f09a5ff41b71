import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PlacementRequest } from "./model/placement-request.js";
import type { SchedulerNode, WorkloadKind } from "./model/scheduler-node.js";
import { SchedulerEngine } from "./scheduler-engine.js";
import { generateCluster, generateWorkloads, zoneNames } from "./simulation/index.js";
import { makeNode, resources } from "./simulation/node-builder.js";
import { ClusterSnapshot } from "./snapshot/cluster-snapshot.js";

// ---- generators: small heterogeneous clusters and requests that exercise every filter ----

const nodeArb = (id: string): fc.Arbitrary<SchedulerNode> =>
  fc
    .record({
      zone: fc.constantFrom("a", "b", "c", undefined),
      kvm: fc.boolean(),
      vm: fc.boolean(),
      arm: fc.boolean(),
      notReady: fc.integer({ min: 0, max: 9 }), // 0: not ready (one in ten)
      cordoned: fc.integer({ min: 0, max: 9 }),
      cpu: fc.integer({ min: 0, max: 8 }),
      memory: fc.integer({ min: 0, max: 8 }),
      disk: fc.integer({ min: 0, max: 4 }),
      port80: fc.integer({ min: 0, max: 9 }),
    })
    .map((r) =>
      makeNode(id, {
        labels: r.zone ? { zone: r.zone } : {},
        capabilities: r.kvm ? ["kvm"] : [],
        runtimes: r.vm ? ["container", "compose", "vm"] : ["container", "compose"],
        arch: r.arm ? "arm64" : "amd64",
        ready: r.notReady !== 0,
        cordoned: r.cordoned === 0,
        allocatable: resources(r.cpu * 500, r.memory * 512, r.disk * 10),
        usedHostPorts: r.port80 === 0 ? [{ port: 80, protocol: "tcp" }] : [],
      }),
    );

const clusterArb = fc
  .integer({ min: 0, max: 8 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => nodeArb(`n${i}`))));

const requestArb = (workloadId: string): fc.Arbitrary<PlacementRequest> =>
  fc
    .record({
      kind: fc.constantFrom<WorkloadKind>("container", "container", "compose", "vm"),
      replicas: fc.integer({ min: 0, max: 5 }),
      cpu: fc.integer({ min: 0, max: 6 }),
      memory: fc.integer({ min: 0, max: 6 }),
      disk: fc.integer({ min: 0, max: 2 }),
      port: fc.constantFrom(undefined, 80, 443),
      zone: fc.constantFrom(undefined, undefined, "a", "b"),
      kvm: fc.boolean(),
      arch: fc.constantFrom(undefined, undefined, "amd64"),
      spread: fc.constantFrom(undefined, 1, 2),
      hardSpread: fc.boolean(),
      replicasMode: fc.constantFrom("preferred" as const, "required" as const, "none" as const),
      tier: fc.constantFrom("web", "db"),
      avoid: fc.constantFrom(undefined, "web", "db"),
    })
    .map((r) => ({
      workloadId,
      kind: r.kind,
      replicas: r.replicas,
      resources: resources(r.cpu * 250, r.memory * 256, r.disk * 5),
      labels: { tier: r.tier },
      ...(r.port ? { hostPorts: [{ port: r.port, protocol: "tcp" as const }] } : {}),
      placement: {
        ...(r.zone ? { nodeSelector: { zone: r.zone } } : {}),
        ...(r.kvm ? { requiredCapabilities: ["kvm"] } : {}),
        ...(r.arch ? { arch: [r.arch] } : {}),
        ...(r.spread
          ? {
              spread: [
                {
                  labelKey: "zone",
                  maxSkew: r.spread,
                  whenUnsatisfiable: r.hardSpread ? ("do-not-schedule" as const) : ("schedule-anyway" as const),
                },
              ],
            }
          : {}),
        antiAffinity: {
          replicas: r.replicasMode,
          ...(r.avoid ? { workloads: [{ matchLabels: { tier: r.avoid } }] } : {}),
        },
      },
    }));

type Op =
  | { kind: "place"; request: PlacementRequest }
  | { kind: "release"; pick: number }
  | { kind: "mutate"; pick: number; node: SchedulerNode }
  | { kind: "remove"; pick: number };
const opsArb = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .integer({ min: 0, max: 5 })
        .chain((w) => requestArb(`w${w}`))
        .map((request) => ({ kind: "place" as const, request })),
    },
    { weight: 1, arbitrary: fc.nat().map((pick) => ({ kind: "release" as const, pick })) },
  ),
  { maxLength: 12 },
);

/** Ops that also change nodes: replace a node's record (cordon, relabel, resize...), remove or add one. */
const churnArb = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .integer({ min: 0, max: 5 })
        .chain((w) => requestArb(`w${w}`))
        .map((request) => ({ kind: "place" as const, request })),
    },
    { weight: 1, arbitrary: fc.nat().map((pick) => ({ kind: "release" as const, pick })) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.nat(), nodeArb("tmp")).map(([pick, node]) => ({ kind: "mutate" as const, pick, node })),
    },
    { weight: 1, arbitrary: fc.nat().map((pick) => ({ kind: "remove" as const, pick })) },
  ),
  { maxLength: 16 },
);

function build(nodes: readonly SchedulerNode[], seed = 1): SchedulerEngine {
  const snapshot = new ClusterSnapshot();
  for (const n of nodes) snapshot.upsertNode(n);
  return new SchedulerEngine(snapshot, { seed, clock: () => 0 });
}

/** Applies ops; returns every decision made and the replicas live at the end with what they asked. */
function apply(engine: SchedulerEngine, ops: readonly Op[]) {
  const live = new Map<string, { nodeId: string; request: PlacementRequest; replica: number }>();
  const decisions = [];
  for (const op of ops) {
    if (op.kind === "place") {
      const result = engine.place(op.request);
      for (const d of result.decisions) {
        decisions.push(d);
        if (d.nodeId)
          live.set(`${d.workloadId}#${d.replica}`, { nodeId: d.nodeId, request: op.request, replica: d.replica });
      }
    } else if (op.kind === "release" && live.size > 0) {
      const [key, v] = [...live.entries()][op.pick % live.size]!;
      engine.snapshot.release(v.request.workloadId, v.replica);
      live.delete(key);
    } else if (op.kind === "mutate") {
      const ids = engine.snapshot.nodes().map((n) => n.id);
      // Replace an existing node's record, or add a new node when the pick is past the end.
      const id = op.pick % (ids.length + 1) < ids.length ? ids[op.pick % (ids.length + 1)]! : `added${op.pick}`;
      engine.snapshot.upsertNode({ ...op.node, id });
    } else if (op.kind === "remove") {
      const ids = engine.snapshot.nodes().map((n) => n.id);
      if (ids.length === 0) continue;
      const change = engine.snapshot.removeNode(ids[op.pick % ids.length]!)!;
      for (const r of change.displaced ?? []) live.delete(`${r.workloadId}#${r.replica}`);
    }
  }
  return { decisions, live };
}

describe("scheduler properties", () => {
  it("never over-commits any dimension on any node, whatever is placed and released", () => {
    fc.assert(
      fc.property(clusterArb, opsArb, (nodes, ops) => {
        const engine = build(nodes);
        const { live } = apply(engine, ops);
        for (const node of nodes) {
          const sum = { cpu: 0, memory: 0, disk: 0 };
          for (const v of live.values()) {
            if (v.nodeId !== node.id) continue;
            sum.cpu += v.request.resources.cpuMillicores;
            sum.memory += v.request.resources.memoryMiB;
            sum.disk += v.request.resources.diskGiB;
          }
          expect(sum.cpu).toBeLessThanOrEqual(node.allocatable.cpuMillicores);
          expect(sum.memory).toBeLessThanOrEqual(node.allocatable.memoryMiB);
          expect(sum.disk).toBeLessThanOrEqual(node.allocatable.diskGiB);
          expect(engine.snapshot.reservedOn(node.id)).toEqual(resources(sum.cpu, sum.memory, sum.disk));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps hard spread within maxSkew over the eligible zones", () => {
    fc.assert(
      fc.property(clusterArb, requestArb("web"), (nodes, base) => {
        const request: PlacementRequest = {
          ...base,
          replicas: Math.max(1, base.replicas),
          placement: {
            ...base.placement,
            spread: [{ labelKey: "zone", maxSkew: 1, whenUnsatisfiable: "do-not-schedule" }],
          },
        };
        const engine = build(nodes);
        const result = engine.place(request);
        // Eligible zones: those with a node that passes the static filters, as explainNode tells.
        const staticPlugins = new Set(["node-ready", "runtime-capability", "node-affinity"]);
        const eligible = new Set<string>();
        for (const e of engine.explainNodes({ ...request, replicas: request.replicas + 1 }, request.replicas)) {
          const zone = engine.snapshot.node(e.nodeId)!.labels.zone;
          if (zone && !e.statuses.some((s) => staticPlugins.has(s.plugin))) eligible.add(zone);
        }
        const counts = new Map([...eligible].map((z) => [z, 0]));
        for (const d of result.decisions) {
          if (!d.nodeId) continue;
          const zone = engine.snapshot.node(d.nodeId)!.labels.zone!;
          expect(eligible.has(zone)).toBe(true);
          counts.set(zone, counts.get(zone)! + 1);
        }
        if (counts.size > 0) expect(Math.max(...counts.values()) - Math.min(...counts.values())).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it("decides every replica: placed on a feasible node, or pending with a diagnosis saying why", () => {
    fc.assert(
      fc.property(clusterArb, opsArb, (nodes, ops) => {
        const engine = build(nodes);
        for (const op of ops) {
          if (op.kind !== "place") continue;
          const result = engine.place(op.request);
          expect(result.decisions.length + result.alreadyPlaced.length).toBe(op.request.replicas);
          for (const d of result.decisions) {
            const diagnosis = d.diagnosis;
            expect(diagnosis.replica).toBe(d.replica);
            expect(diagnosis.winner).toBe(d.nodeId);
            expect(diagnosis.nodesEvaluated).toBe(nodes.length);
            if (d.nodeId === null) {
              expect(diagnosis.feasibleNodes).toBe(0);
              expect(diagnosis.message).toMatch(new RegExp(`^0/${nodes.length} nodes are available: .+\\.$`));
            } else {
              expect(diagnosis.feasibleNodes).toBeGreaterThan(0);
              expect(diagnosis.candidates[0]!.nodeId).toBe(d.nodeId);
            }
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it("makes the same decisions for the same snapshot, seed and requests, placing or planning", () => {
    fc.assert(
      fc.property(clusterArb, opsArb, fc.integer(), (nodes, ops, seed) => {
        const a = apply(build(nodes, seed), ops).decisions.map((d) => JSON.stringify(d.diagnosis));
        const b = apply(build(nodes, seed), ops).decisions.map((d) => JSON.stringify(d.diagnosis));
        expect(a).toEqual(b);
        const engine = build(nodes, seed);
        for (const op of ops) {
          if (op.kind !== "place") continue;
          const planned = engine.plan(op.request).decisions.map((d) => JSON.stringify(d.diagnosis));
          const placed = engine.place(op.request).decisions.map((d) => JSON.stringify(d.diagnosis));
          expect(planned.map((p) => p.replace(/"generation":\d+/, ""))).toEqual(
            placed.map((p) => p.replace(/"generation":\d+/, "")),
          );
        }
      }),
      { numRuns: 150 },
    );
  });

  it("makes the same decisions on a large cluster, where only a sample of the feasible nodes is scored", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer(), (clusterSeed, seed) => {
        const nodes = generateCluster({ nodes: 400, seed: clusterSeed });
        const workloads = generateWorkloads({ count: 150, seed: clusterSeed, zones: zoneNames(400) });
        const run = () => {
          const engine = build(nodes, seed);
          return workloads.flatMap((w) => engine.place(w).decisions.map((d) => `${d.replica}:${d.nodeId}`));
        };
        expect(run()).toEqual(run());
      }),
      { numRuns: 4 },
    );
  });

  it("counts add up: every failing filter of every node, as each node's own explanation has it", () => {
    fc.assert(
      fc.property(clusterArb, churnArb, requestArb("probe"), (nodes, ops, probe) => {
        const engine = build(nodes);
        // Decide once before the churn too, so cached verdicts exist and must follow the changes.
        engine.plan({ ...probe, replicas: 1 });
        apply(engine, ops);
        const request = { ...probe, replicas: 1 };
        const diagnosis = engine.plan(request).decisions[0]!.diagnosis;
        const explanations = engine.explainNodes(request, 0);
        const failing = explanations.filter((e) => !e.feasible).length;
        expect(diagnosis.nodesEvaluated).toBe(engine.snapshot.nodeCount);
        expect(failing).toBe(diagnosis.nodesEvaluated - diagnosis.feasibleNodes);
        if (diagnosis.winner === null) expect(failing).toBe(diagnosis.nodesEvaluated);
        const perReason = new Map<string, number>();
        for (const e of explanations)
          for (const s of e.statuses)
            perReason.set(`${s.plugin}/${s.reason}`, (perReason.get(`${s.plugin}/${s.reason}`) ?? 0) + 1);
        const counted = new Map(diagnosis.filterCounts.map((c) => [`${c.plugin}/${c.reason}`, c.count]));
        expect(counted).toEqual(perReason);
        for (const c of diagnosis.filterCounts) expect(c.count).toBeLessThanOrEqual(diagnosis.nodesEvaluated);
        for (const x of diagnosis.exhaustion) {
          const short = explanations.flatMap((e) => e.statuses).filter((s) => s.detail.unit === x.unit);
          expect(short.length).toBe(x.nodesShort);
          expect(Math.max(0, ...short.map((s) => s.detail.free!))).toBe(x.bestAvailable);
        }
      }),
      { numRuns: 300 },
    );
  });
});
