/**
 * Lexical relevance ranking (BM25) of short documents — events, error-code remediation texts —
 * against a query built from what is being explained (workload id, node ids, reasons, codes).
 * Deterministic and dependency free; good enough for "which of these 500 events matter here".
 */

const STOP = new Set(["a", "an", "the", "is", "are", "of", "on", "in", "to", "for", "and", "or", "it", "its", "be"]);

/** Lower-case word tokens; ids like `web-2` and codes like `NODE_LOST` stay whole and also split. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().match(/[a-z0-9][a-z0-9_.-]*/g) ?? []) {
    const word = raw.replace(/[.-]+$/, "");
    if (!word || STOP.has(word)) continue;
    out.push(word);
    const parts = word.split(/[_.-]+/).filter((p) => p && p !== word && !STOP.has(p));
    out.push(...parts);
  }
  return out;
}

/** A document to rank: its id and text. */
export interface RankedDocument<T> {
  readonly item: T;
  readonly score: number;
}

/**
 * Ranks `items` by BM25 of `text(item)` against `query`, best first; items with no matching term
 * are dropped. `boost(item)` multiplies a score (e.g. recency, severity); ties keep input order.
 */
export function rankLexically<T>(
  query: string,
  items: readonly T[],
  text: (item: T) => string,
  boost: (item: T) => number = () => 1,
): RankedDocument<T>[] {
  const queryTerms = [...new Set(tokens(query))];
  if (queryTerms.length === 0 || items.length === 0) return [];
  const docs = items.map((item) => tokens(text(item)));
  const avgLen = docs.reduce((s, d) => s + d.length, 0) / docs.length || 1;
  const df = new Map<string, number>();
  for (const doc of docs) for (const term of new Set(doc)) df.set(term, (df.get(term) ?? 0) + 1);
  const k1 = 1.2;
  const b = 0.75;
  const n = docs.length;
  const ranked: RankedDocument<T>[] = [];
  docs.forEach((doc, i) => {
    const tf = new Map<string, number>();
    for (const term of doc) tf.set(term, (tf.get(term) ?? 0) + 1);
    let score = 0;
    for (const term of queryTerms) {
      const f = tf.get(term);
      if (!f) continue;
      const idf = Math.log(1 + (n - (df.get(term) ?? 0) + 0.5) / ((df.get(term) ?? 0) + 0.5));
      score += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * doc.length) / avgLen));
    }
    if (score > 0) ranked.push({ item: items[i]!, score: score * boost(items[i]!) });
  });
  return ranked.sort((x, y) => y.score - x.score);
}
