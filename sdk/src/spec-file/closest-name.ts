/** Edit distance (insertions, deletions, substitutions; case-insensitive). */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost));
    }
    previous = current;
  }
  return previous[y.length]!;
}

/**
 * The known name closest to a mistyped one (`imagee` → `image`, `host_port` → `hostPort`), or
 * `undefined` when none is close (more than a third of the name differs).
 */
export function closestName(typed: string, known: readonly string[]): string | undefined {
  const bare = typed.replace(/[_-]/g, "").toLowerCase();
  const exact = known.find((k) => k.toLowerCase() === bare);
  if (exact) return exact;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = editDistance(typed, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(typed.length / 3)) ? best : undefined;
}
