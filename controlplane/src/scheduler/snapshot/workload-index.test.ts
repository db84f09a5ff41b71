import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compileSelector,
  expressionsKey,
  type LabelSelector,
  matchesAll,
  toLabelMap,
} from "../model/label-selector.js";
import { makeNode, resources } from "../simulation/node-builder.js";
import { ClusterSnapshot } from "./cluster-snapshot.js";
import { compileTraits } from "./workload-index.js";

const tiers = ["web", "db", "cache"];
const labelsArb = fc.record({ tier: fc.constantFrom(...tiers) }, { requiredKeys: [] });
const selectorArb: fc.Arbitrary<LabelSelector> = fc.oneof(
  fc.record({ matchLabels: fc.record({ tier: fc.constantFrom(...tiers) }) }),
  fc.record({
    matchExpressions: fc
      .tuple(fc.constantFrom("In", "NotIn", "Exists", "DoesNotExist"), fc.subarray(tiers, { minLength: 1 }))
      .map(([operator, values]) => [
        operator === "In" || operator === "NotIn"
          ? { key: "tier", operator: operator as "In" | "NotIn", values }
          : { key: "tier", operator: operator as "Exists" | "DoesNotExist" },
      ]),
  }),
);
const placementArb = fc.record({
  workload: fc.integer({ min: 0, max: 5 }),
  node: fc.integer({ min: 0, max: 3 }),
  release: fc.boolean(),
});

describe("WorkloadIndex", () => {
  it("finds the nodes of matching and avoiding workloads like a scan over all replicas", () => {
    fc.assert(
      fc.property(
        fc.array(labelsArb, { minLength: 6, maxLength: 6 }),
        fc.array(fc.option(selectorArb, { nil: undefined }), { minLength: 6, maxLength: 6 }),
        fc.array(placementArb, { maxLength: 30 }),
        selectorArb,
        labelsArb,
        fc.integer({ min: 0, max: 6 }),
        (labels, avoids, ops, probe, probeLabels, self) => {
          const s = new ClusterSnapshot();
          for (let n = 0; n < 4; n++) s.upsertNode(makeNode(`n${n}`));
          const live = new Map<string, { workload: number; node: number }>();
          let replica = 0;
          for (const op of ops) {
            const held = [...live.entries()].find(([, v]) => v.workload === op.workload);
            if (op.release && held) {
              const [key] = held;
              s.release(`w${op.workload}`, Number(key.split("#")[1]));
              live.delete(key);
              continue;
            }
            const avoid = avoids[op.workload];
            s.reserve({
              workloadId: `w${op.workload}`,
              replica: replica,
              nodeId: `n${op.node}`,
              resources: resources(0, 0),
              labels: labels[op.workload]!,
              ...(avoid ? { antiAffinity: [avoid] } : {}),
            });
            live.set(`w${op.workload}#${replica++}`, op);
          }
          const selfId = `w${self}`;
          const expression = compileSelector(probe);
          const selector = { expressions: expression, key: expressionsKey(expression) };
          const matching = new Set<string>();
          s.workloads.forEachNodeMatching(selector, selfId, (e) => matching.add(e.id));
          const avoiding = new Set<string>();
          s.workloads.forEachNodeAvoiding(compileTraits(probeLabels, undefined), selfId, (e) => avoiding.add(e.id));

          const expectMatching = new Set<string>();
          const expectAvoiding = new Set<string>();
          for (const [key, v] of live) {
            const id = key.split("#")[0]!;
            if (id === selfId) continue;
            if (matchesAll(expression, toLabelMap(labels[v.workload]))) expectMatching.add(`n${v.node}`);
            const avoid = avoids[v.workload];
            if (avoid && matchesAll(compileSelector(avoid), toLabelMap(probeLabels))) expectAvoiding.add(`n${v.node}`);
          }
          expect([...matching].sort()).toEqual([...expectMatching].sort());
          expect([...avoiding].sort()).toEqual([...expectAvoiding].sort());
        },
      ),
    );
  });
});

describe("WorkloadRecord.countsByNodeLabel", () => {
  type Op =
    | { kind: "place"; node: number }
    | { kind: "release"; pick: number }
    | { kind: "relabel"; node: number; zone?: string };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant("place" as const), node: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }),
    fc.record(
      {
        kind: fc.constant("relabel" as const),
        node: fc.integer({ min: 0, max: 3 }),
        zone: fc.constantFrom("a", "b", "c"),
      },
      { requiredKeys: ["kind", "node"] },
    ),
  );

  it("stays equal to a recount while replicas come and go and nodes are relabelled", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.integer({ min: 0, max: 40 }), (ops, askAt) => {
        const s = new ClusterSnapshot();
        for (let n = 0; n < 4; n++) s.upsertNode(makeNode(`n${n}`, { labels: { zone: "a" } }));
        const live: number[] = [];
        let next = 0;
        ops.forEach((op, i) => {
          // Start tracking part-way through, so both the initial build and the upkeep are tested.
          if (i === askAt) s.workloads.get("w")?.countsByNodeLabel("zone");
          if (op.kind === "place") {
            s.reserve({ workloadId: "w", replica: next, nodeId: `n${op.node}`, resources: resources(0, 0) });
            live.push(next++);
          } else if (op.kind === "release" && live.length > 0) {
            const [replica] = live.splice(op.pick % live.length, 1);
            s.release("w", replica!);
          } else if (op.kind === "relabel") {
            s.updateNode(`n${op.node}`, { labels: op.zone ? { zone: op.zone } : {} });
          }
        });
        const record = s.workloads.get("w");
        if (record === undefined) return;
        const expected = new Map<string, number>();
        for (const replica of live) {
          const zone = s.node(s.placementOf("w", replica)!)!.labels.zone;
          if (zone !== undefined) expected.set(zone, (expected.get(zone) ?? 0) + 1);
        }
        expect(new Map(record.countsByNodeLabel("zone"))).toEqual(expected);
      }),
    );
  });
});
