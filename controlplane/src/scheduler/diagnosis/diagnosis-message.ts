import { reasonCatalog } from "../framework/reasons.js";
import type { FilterCount, PlacementDiagnosis } from "./placement-diagnosis.js";

/** The fields of a diagnosis the message is rendered from. */
export type DiagnosisFacts = Omit<PlacementDiagnosis, "message">;

function renderCount(entry: FilterCount, facts: DiagnosisFacts): string {
  const info = reasonCatalog[entry.reason];
  let text = `${entry.count} ${info.phrase}`;
  if (entry.subject) text += ` ${entry.subject}`;
  if (info.dimension) {
    const x = facts.exhaustion.find((e) => e.dimension === info.dimension);
    if (x) text += ` (need ${x.needed} ${x.unit}, most free ${x.bestAvailable} ${x.unit})`;
  }
  return text;
}

/**
 * Renders a diagnosis for people, from its structured fields only:
 *
 * - unschedulable: `0/12 nodes are available: 7 insufficient memory (need 2048 MiB, most free
 *   1536 MiB), 5 missing capability kvm.` (reasons in `filterCounts` order: count, then reason);
 * - placed: `placed on n3 (score 87): 12/12 nodes feasible; top: n3 87, n7 80, n1 74`, with
 *   `, 250 scored` after the feasible count when only a sample was scored.
 */
export function renderDiagnosisMessage(facts: DiagnosisFacts): string {
  const total = facts.nodesEvaluated;
  if (facts.winner === null) {
    if (total === 0) return "0/0 nodes are available: no nodes in the cluster.";
    const parts = facts.filterCounts.map((c) => renderCount(c, facts));
    return `${facts.feasibleNodes}/${total} nodes are available: ${parts.join(", ")}.`;
  }
  const best = facts.candidates[0];
  const sampled = facts.scoredNodes < facts.feasibleNodes ? `, ${facts.scoredNodes} scored` : "";
  const top = facts.candidates.map((c) => `${c.nodeId} ${Math.round(c.total)}`).join(", ");
  return (
    `placed on ${facts.winner} (score ${Math.round(best?.total ?? 0)}): ` +
    `${facts.feasibleNodes}/${total} nodes feasible${sampled}; top: ${top}`
  );
}
