import { api } from "@persys/schema";
import { usageSeries } from "../nodes/usage-recorder.js";
import { allNodes, type IntelligenceSources } from "./intelligence-sources.js";
import { reservationSeries } from "./reservation-sampler.js";
import { type DimensionInfo, dimensions } from "./resource-math.js";
import { type Crossing, crossing, fitHolt, fitLinear, type Point, type TrendFit } from "./trend-fit.js";

const { FORECAST_SIGNAL_RESERVATION: RESERVATION, FORECAST_SIGNAL_USAGE: USAGE } = api.ForecastSignal;
const { FORECAST_METHOD_LINEAR: LINEAR, FORECAST_METHOD_HOLT: HOLT } = api.ForecastMethod;

/** The usage series of a node and dimension (cpu, memory and disk, written from heartbeats). */
function usageSeriesOf(nodeId: string, d: DimensionInfo): string | undefined {
  if (d.name === "cpu") return usageSeries.nodeCpu(nodeId);
  if (d.name === "memory") return usageSeries.nodeMemory(nodeId);
  if (d.name === "disk") return usageSeries.nodeDisk(nodeId);
  return undefined;
}

/** Fits `method` (or the better of both for UNSPECIFIED: Holt only when its error is clearly lower). */
export function chooseFit(points: readonly Point[], method: api.ForecastMethod): TrendFit | undefined {
  const linear = method === HOLT ? undefined : fitLinear(points);
  const holt = method === LINEAR ? undefined : fitHolt(points);
  if (method === LINEAR) return linear;
  if (method === HOLT) return holt;
  if (linear && holt && holt.residualStd < 0.8 * linear.residualStd) return holt;
  return linear ?? holt;
}

/** Human duration: 42 s, 7.5 min, 3.2 h, 4.1 d. */
export function duration(seconds: number): string {
  if (seconds < 90) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  if (seconds < 5400) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

interface SeriesInput {
  readonly nodeId: string;
  readonly dimension: DimensionInfo;
  readonly signal: api.ForecastSignal;
  readonly series: string;
  readonly points: Point[];
  readonly current: number;
  readonly limit: number;
}

/** One forecast from a series: fit, crossing of the limit, band, and the one-line message. */
export function forecastOf(input: SeriesInput, method: api.ForecastMethod, now: number): api.ResourceForecast {
  const fit = chooseFit(input.points, method);
  const at: Crossing | undefined = fit ? crossing(fit, input.limit) : undefined;
  const who = input.nodeId || "cluster";
  const what = `${input.dimension.name} ${input.signal === RESERVATION ? "reservations" : "usage"}`;
  const base: api.ResourceForecast = {
    nodeId: input.nodeId,
    dimension: input.dimension.dimension,
    signal: input.signal,
    method: fit?.method === "holt" ? HOLT : fit ? LINEAR : api.ForecastMethod.FORECAST_METHOD_UNSPECIFIED,
    unit: input.dimension.unit,
    current: input.current,
    limit: input.limit,
    slopePerHour: fit ? fit.slopePerMs * 3_600_000 : 0,
    rSquared: fit?.rSquared ?? 0,
    residualStd: fit?.residualStd ?? 0,
    points: input.points.length,
    series: input.series,
    message: "",
  };
  if (!fit)
    return { ...base, message: `${who} ${what}: ${input.points.length} point(s) in the window, too few to fit` };
  const fitText = `${fit.method}, R² ${fit.rSquared.toFixed(2)}, ${fit.points} points`;
  if (!at) {
    return {
      ...base,
      message: `${who} ${what} at ${round(input.current)}/${input.limit} ${input.dimension.unit}, not growing (${fitText})`,
    };
  }
  const seconds = Math.max(0, (at.atMs - now) / 1000);
  const early = Math.max(0, (at.earliestMs - now) / 1000);
  const late = at.latestMs === undefined ? undefined : Math.max(0, (at.latestMs - now) / 1000);
  return {
    ...base,
    secondsToExhaustion: seconds,
    exhaustedAt: new Date(at.atMs),
    exhaustedAtEarliest: new Date(at.earliestMs),
    ...(at.latestMs !== undefined ? { exhaustedAtLatest: new Date(at.latestMs) } : {}),
    message:
      seconds === 0
        ? `${who} ${what} ${input.signal === RESERVATION ? "are" : "is"} at the limit of ${input.limit} ${input.dimension.unit}`
        : `${who} ${what} ${input.signal === RESERVATION ? "reach" : "reaches"} ${input.limit} ${input.dimension.unit} in ${duration(seconds)} (${duration(early)}–${late === undefined ? "never" : duration(late)}), ${fitText}`,
  };
}

const round = (v: number) => Math.round(v * 10) / 10;

async function points(sources: IntelligenceSources, series: string, from: number, now: number): Promise<Point[]> {
  return (await sources.events.range(series, from, now)).map((s) => ({ t: s.timestampMs, v: s.value }));
}

/** Sum of per-node series at the timestamps every node has (series share their sampling buckets). */
function sumAligned(perNode: readonly Point[][]): Point[] {
  if (perNode.length === 0) return [];
  const sums = new Map<number, { v: number; n: number }>();
  for (const series of perNode) {
    for (const p of series) {
      const s = sums.get(p.t) ?? { v: 0, n: 0 };
      sums.set(p.t, { v: s.v + p.v, n: s.n + 1 });
    }
  }
  return [...sums.entries()]
    .filter(([, s]) => s.n === perNode.length)
    .sort(([a], [b]) => a - b)
    .map(([t, s]) => ({ t, v: s.v }));
}

/**
 * Forecasts per node (or one node) and for the cluster: for each dimension, when reservations reach
 * allocatable and when measured use reaches capacity, from the series in the window. Lost nodes are
 * left out; the cluster sums ready nodes.
 *
 * @throws PersysError NOT_FOUND (from the node view) when `nodeId` names no node.
 */
export async function forecastCapacity(
  sources: IntelligenceSources,
  request: { nodeId: string; windowSeconds: number; method: api.ForecastMethod },
): Promise<api.ResourceForecast[]> {
  const now = sources.now();
  const from = now - request.windowSeconds * 1000;
  const nodes = allNodes(sources).filter((n) => n.state !== api.NodeState.NODE_STATE_LOST);
  const chosen = request.nodeId ? nodes.filter((n) => n.id === request.nodeId) : nodes;
  const out: api.ResourceForecast[] = [];
  const clusterInputs = new Map<string, { points: Point[][]; current: number; limit: number; series: string[] }>();
  for (const node of nodes) {
    for (const d of dimensions) {
      for (const signal of [RESERVATION, USAGE]) {
        const series = signal === RESERVATION ? reservationSeries(node.id, d.name) : usageSeriesOf(node.id, d);
        const limit = (signal === RESERVATION ? node.allocatable : node.capacity)?.[d.field] ?? 0;
        if (!series || limit <= 0) continue;
        const current = (signal === RESERVATION ? node.allocated : node.usage)?.[d.field] ?? 0;
        const pts = await points(sources, series, from, now);
        if (chosen.includes(node)) {
          out.push(
            forecastOf(
              { nodeId: node.id, dimension: d, signal, series, points: pts, current, limit },
              request.method,
              now,
            ),
          );
        }
        if (node.state !== api.NodeState.NODE_STATE_READY) continue;
        const key = `${d.name}/${signal}`;
        const sum = clusterInputs.get(key) ?? { points: [], current: 0, limit: 0, series: [] };
        sum.points.push(pts);
        sum.current += current;
        sum.limit += limit;
        sum.series.push(series);
        clusterInputs.set(key, sum);
      }
    }
  }
  if (!request.nodeId) {
    for (const d of dimensions) {
      for (const signal of [RESERVATION, USAGE]) {
        const sum = clusterInputs.get(`${d.name}/${signal}`);
        if (!sum || sum.limit <= 0) continue;
        const series = signal === RESERVATION ? `reserved:node:*:${d.name}` : `usage:node:*:${d.name}`;
        out.push(
          forecastOf(
            {
              nodeId: "",
              dimension: d,
              signal,
              series,
              points: sumAligned(sum.points),
              current: sum.current,
              limit: sum.limit,
            },
            request.method,
            now,
          ),
        );
      }
    }
  }
  return out;
}
