/**
 * Trend fits of a time series for capacity forecasts: ordinary least squares on (time, value) and
 * Holt's linear exponential smoothing (level + trend). Both answer "when does the series reach a
 * limit", with a confidence band from the fit's residuals. Pure functions, no I/O.
 */

/** One observation: time in ms since the epoch, value in the series' unit. */
export interface Point {
  readonly t: number;
  readonly v: number;
}

/** A fitted trend: value at `atMs` is `level + slopePerMs × (atMs − originMs)`. */
export interface TrendFit {
  readonly method: "linear" | "holt";
  /** The fitted value at `originMs` (the last observation's time). */
  readonly level: number;
  readonly slopePerMs: number;
  readonly originMs: number;
  /** Coefficient of determination of the fit over the points, 0..1 (1 for a perfect line). */
  readonly rSquared: number;
  /** Standard deviation of the residuals (one-step errors for Holt), in the series' unit. */
  readonly residualStd: number;
  /** Standard error of the slope, per ms (linear: from the regression; Holt: from residuals over the span). */
  readonly slopeStdErr: number;
  readonly points: number;
}

/** When the trend reaches a limit, with a band; all absent when the trend never reaches it. */
export interface Crossing {
  /** Most likely time the limit is reached (ms since the epoch); `originMs` when already at or over it. */
  readonly atMs: number;
  /** Early edge of the band: the slope one and a half standard errors steeper, the level higher by the residual spread. */
  readonly earliestMs: number;
  /** Late edge of the band; `undefined` when the pessimistic trend does not grow. */
  readonly latestMs: number | undefined;
}

/** Band width in standard errors (about an 87 % two-sided interval under normal errors). */
export const BAND_SIGMAS = 1.5;

/**
 * Least squares line through the points. Needs at least two distinct times; returns undefined
 * otherwise. Times are shifted to the last point before fitting, so large epoch values lose no
 * precision.
 */
export function fitLinear(points: readonly Point[]): TrendFit | undefined {
  const n = points.length;
  if (n < 2) return undefined;
  const origin = points[n - 1]!.t;
  let st = 0;
  let sv = 0;
  for (const p of points) {
    st += p.t - origin;
    sv += p.v;
  }
  const mt = st / n;
  const mv = sv / n;
  let stt = 0;
  let stv = 0;
  let svv = 0;
  for (const p of points) {
    const dt = p.t - origin - mt;
    const dv = p.v - mv;
    stt += dt * dt;
    stv += dt * dv;
    svv += dv * dv;
  }
  if (stt === 0) return undefined;
  const slope = stv / stt;
  const intercept = mv - slope * mt;
  let sse = 0;
  for (const p of points) {
    const r = p.v - (intercept + slope * (p.t - origin));
    sse += r * r;
  }
  const dof = Math.max(1, n - 2);
  const residualStd = Math.sqrt(sse / dof);
  return {
    method: "linear",
    level: intercept,
    slopePerMs: slope,
    originMs: origin,
    rSquared: svv === 0 ? 1 : Math.max(0, Math.min(1, 1 - sse / svv)),
    residualStd,
    slopeStdErr: Math.sqrt(sse / dof / stt),
    points: n,
  };
}

/**
 * Holt's linear trend on irregularly spaced points: the trend is per ms, each step's prediction is
 * `level + trend × Δt`. `alpha` smooths the level and `beta` the trend (0 < both ≤ 1). Needs at
 * least three points.
 */
export function fitHolt(points: readonly Point[], alpha = 0.5, beta = 0.3): TrendFit | undefined {
  const n = points.length;
  if (n < 3) return undefined;
  const first = points[0]!;
  const second = points[1]!;
  if (second.t === first.t) return undefined;
  let level = second.v;
  let trend = (second.v - first.v) / (second.t - first.t);
  let sse = 0;
  let sst = 0;
  const mean = points.reduce((s, p) => s + p.v, 0) / n;
  for (let i = 2; i < n; i++) {
    const p = points[i]!;
    const dt = p.t - points[i - 1]!.t;
    const predicted = level + trend * dt;
    const error = p.v - predicted;
    sse += error * error;
    sst += (p.v - mean) * (p.v - mean);
    const nextLevel = alpha * p.v + (1 - alpha) * predicted;
    if (dt > 0) trend = beta * ((nextLevel - level) / dt) + (1 - beta) * trend;
    level = nextLevel;
  }
  const steps = n - 2;
  const residualStd = Math.sqrt(sse / Math.max(1, steps - 1));
  const span = points[n - 1]!.t - first.t;
  return {
    method: "holt",
    level,
    slopePerMs: trend,
    originMs: points[n - 1]!.t,
    rSquared: sst === 0 ? 1 : Math.max(0, Math.min(1, 1 - sse / sst)),
    residualStd,
    slopeStdErr: span > 0 ? (residualStd * Math.SQRT2) / span : 0,
    points: n,
  };
}

/** The value the trend predicts at `atMs`. */
export function predict(fit: TrendFit, atMs: number): number {
  return fit.level + fit.slopePerMs * (atMs - fit.originMs);
}

/**
 * When the trend reaches `limit` from below. Undefined when it is below the limit and not growing
 * (or growing too slowly to matter: less than 1e-12 units per ms).
 */
export function crossing(fit: TrendFit, limit: number): Crossing | undefined {
  const remaining = limit - fit.level;
  if (remaining <= 0) return { atMs: fit.originMs, earliestMs: fit.originMs, latestMs: fit.originMs };
  if (fit.slopePerMs <= 1e-12) return undefined;
  const at = fit.originMs + remaining / fit.slopePerMs;
  const fastSlope = fit.slopePerMs + BAND_SIGMAS * fit.slopeStdErr;
  const slowSlope = fit.slopePerMs - BAND_SIGMAS * fit.slopeStdErr;
  const early = Math.max(0, remaining - BAND_SIGMAS * fit.residualStd);
  const late = remaining + BAND_SIGMAS * fit.residualStd;
  return {
    atMs: at,
    earliestMs: Math.min(at, fit.originMs + early / fastSlope),
    latestMs: slowSlope > 1e-12 ? Math.max(at, fit.originMs + late / slowSlope) : undefined,
  };
}

/** The `q` quantile (0..1) of the values, by linear interpolation; undefined for none. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = Math.min(1, Math.max(0, q)) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
