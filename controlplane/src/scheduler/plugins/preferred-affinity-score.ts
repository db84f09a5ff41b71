import type { CompiledPreference } from "../framework/compiled-request.js";
import type { Cycle, Scorer } from "../framework/plugin.js";
import { expressionsKey, matchesAll } from "../model/label-selector.js";
import type { NodeClass } from "../snapshot/node-classes.js";

interface ClassScores {
  scores: Uint8Array;
  computed: number;
}

function preferenceKey(terms: readonly CompiledPreference[]): string {
  return terms.map((t) => `${t.weight}:${expressionsKey(t.match)}`).join("|");
}

/**
 * Scorer for `preferredAffinity`: 100 × (sum of weights of the terms the node's labels match) /
 * (sum of all weights). Labels are class properties, so scores are cached per class and per set
 * of terms.
 */
export function preferredAffinity(): Scorer {
  const cache = new Map<string, ClassScores>();
  const keys = new WeakMap<readonly CompiledPreference[], string>();
  let current: Uint8Array = new Uint8Array(0);
  const extend = (entry: ClassScores, classes: readonly NodeClass[], terms: readonly CompiledPreference[]) => {
    if (entry.scores.length < classes.length) {
      const grown = new Uint8Array(Math.max(classes.length, entry.scores.length * 2));
      grown.set(entry.scores);
      entry.scores = grown;
    }
    const total = terms.reduce((sum, t) => sum + t.weight, 0);
    for (let c = entry.computed; c < classes.length; c++) {
      let matched = 0;
      for (const t of terms) if (matchesAll(t.match, classes[c]!.labels)) matched += t.weight;
      entry.scores[c] = Math.round((100 * matched) / total);
    }
    entry.computed = classes.length;
  };
  return {
    name: "preferred-affinity",
    prepare(cycle: Cycle) {
      const terms = cycle.request.preferred;
      if (terms.length === 0) return false;
      let key = keys.get(terms);
      if (key === undefined) {
        key = preferenceKey(terms);
        keys.set(terms, key);
      }
      let entry = cache.get(key);
      if (entry === undefined) {
        if (cache.size >= 1024) cache.clear();
        entry = { scores: new Uint8Array(16), computed: 0 };
        cache.set(key, entry);
      }
      const classes = cycle.snapshot.classes.all;
      if (entry.computed < classes.length) extend(entry, classes, terms);
      current = entry.scores;
      return true;
    },
    score(cycle: Cycle, slots: Int32Array, count: number, out: Float64Array) {
      const classOf = cycle.snapshot.columns.classOf;
      for (let j = 0; j < count; j++) out[j] = current[classOf[slots[j]!]!]!;
    },
  };
}
