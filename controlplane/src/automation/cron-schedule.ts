/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week, UTC) as used by
 * automation policies: `*`, numbers, ranges `a-b`, lists `a,b` and steps `*\/n` or `a-b/n`.
 * Day-of-month and day-of-week combine as in Vixie cron: when both are restricted, either matches.
 */

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 7 },
] as const;

export interface CronSchedule {
  readonly sets: readonly ReadonlySet<number>[];
  readonly domRestricted: boolean;
  readonly dowRestricted: boolean;
}

/** Parses an expression; throws an Error naming the bad field. */
export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`must have 5 fields (minute hour day month weekday), has ${parts.length}`);
  const sets = parts.map((part, i) => {
    const f = FIELDS[i]!;
    const out = new Set<number>();
    for (const item of part.split(",")) {
      const m = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/.exec(item);
      if (!m) throw new Error(`${f.name}: "${item}" is not a number, range, list or step`);
      const [lo, hi] =
        m[1] === "*"
          ? [f.min, f.max]
          : m[1]!.includes("-")
            ? m[1]!.split("-").map(Number)
            : [Number(m[1]), Number(m[1])];
      const step = m[2] ? Number(m[2]) : 1;
      if (lo! < f.min || hi! > f.max || lo! > hi! || step < 1)
        throw new Error(`${f.name}: "${item}" is outside ${f.min}-${f.max}`);
      for (let v = lo!; v <= hi!; v += step) out.add(i === 4 && v === 7 ? 0 : v);
    }
    return out;
  });
  return { sets, domRestricted: parts[2] !== "*", dowRestricted: parts[4] !== "*" };
}

/** Whether the schedule fires in the minute of `date` (UTC). */
export function cronMatches(schedule: CronSchedule, date: Date): boolean {
  const [minute, hour, dom, month, dow] = schedule.sets;
  if (!minute!.has(date.getUTCMinutes()) || !hour!.has(date.getUTCHours()) || !month!.has(date.getUTCMonth() + 1)) {
    return false;
  }
  const domOk = dom!.has(date.getUTCDate());
  const dowOk = dow!.has(date.getUTCDay());
  if (schedule.domRestricted && schedule.dowRestricted) return domOk || dowOk;
  return domOk && dowOk;
}
