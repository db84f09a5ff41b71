import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cronMatches, parseCron } from "./cron-schedule.js";

const at = (iso: string) => new Date(iso);

describe("cron schedules", () => {
  it.each([
    { name: "every minute", expr: "* * * * *", date: "2026-12-01T10:07:00Z", want: true },
    { name: "every 5 minutes, on the 5", expr: "*/5 * * * *", date: "2026-12-01T10:05:30Z", want: true },
    { name: "every 5 minutes, off the 5", expr: "*/5 * * * *", date: "2026-12-01T10:07:00Z", want: false },
    { name: "weekdays at 02:30", expr: "30 2 * * 1-5", date: "2026-12-01T02:30:00Z", want: true },
    { name: "weekdays at 02:30 on a Sunday", expr: "30 2 * * 1-5", date: "2026-12-06T02:30:00Z", want: false },
    { name: "Sunday as 7", expr: "0 0 * * 7", date: "2026-12-06T00:00:00Z", want: true },
    { name: "day of month or weekday", expr: "0 0 1 * 5", date: "2026-12-04T00:00:00Z", want: true },
    { name: "list of hours", expr: "0 8,20 * * *", date: "2026-12-01T20:00:00Z", want: true },
  ])("$name", ({ expr, date, want }) => {
    expect(cronMatches(parseCron(expr), at(date))).toBe(want);
  });

  it.each([
    { name: "too few fields", expr: "* * *", want: /5 fields/ },
    { name: "minute out of range", expr: "61 * * * *", want: /minute/ },
    { name: "garbage", expr: "a * * * *", want: /minute: "a"/ },
    { name: "zero step", expr: "*/0 * * * *", want: /minute/ },
  ])("rejects $name", ({ expr, want }) => {
    expect(() => parseCron(expr)).toThrow(want);
  });

  it("'*/n' fires exactly once every n minutes over any day", () => {
    fc.assert(
      fc.property(fc.constantFrom(1, 2, 3, 5, 10, 15, 20, 30), fc.integer({ min: 0, max: 10_000 }), (n, day) => {
        const schedule = parseCron(`*/${n} * * * *`);
        const start = Date.UTC(2026, 0, 1) + day * 86_400_000;
        let fired = 0;
        for (let m = 0; m < 60; m++) if (cronMatches(schedule, new Date(start + m * 60_000))) fired++;
        expect(fired).toBe(60 / n);
      }),
    );
  });
});
