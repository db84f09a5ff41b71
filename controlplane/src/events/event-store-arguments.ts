/**
 * Validation and normalisation of `EventStore` arguments, shared by every implementation so they
 * reject the same input with the same `INVALID_ARGUMENT` details (one violation per bad field).
 */
import { type ErrorCode, type FieldViolation, invalid } from "@persys/schema";
import { type EventIdParts, MAX_SEQ, nextIdParts, parseEventId, previousIdParts, ZERO_ID } from "./event-id.js";
import type {
  CounterOptions,
  EventAppendOptions,
  EventReadOptions,
  EventRetentionDefaults,
  EventSubscribeOptions,
  SeriesSampleOptions,
} from "./event-store.js";

/** Largest `limit` of one read. */
export const MAX_EVENT_READ_LIMIT = 10_000;
/** `limit` of a read that names none. */
export const DEFAULT_EVENT_READ_LIMIT = 1_000;
/** Largest record: field names, values and payload JSON, in UTF-8 bytes. */
export const MAX_EVENT_RECORD_BYTES = 64 * 1024;
/** Most fields in one record. */
export const MAX_EVENT_FIELDS = 64;

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._:/@=+-]{0,255}$/;
const fieldNamePattern = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Collects violations and throws them together. */
export class ArgumentCheck {
  private readonly violations: FieldViolation[] = [];

  constructor(
    private readonly code: Extract<ErrorCode, "INVALID_ARGUMENT" | "INVALID_CONFIG"> = "INVALID_ARGUMENT",
    private readonly subject = "event store argument",
  ) {}

  add(path: string, reason: string): void {
    this.violations.push({ path, reason });
  }

  /** Throws (`INVALID_ARGUMENT` unless told otherwise) naming every collected violation, if any. */
  done(): void {
    if (this.violations.length > 0) throw invalid(this.code, this.violations, this.subject);
  }

  name(value: unknown, path: string): string {
    if (typeof value !== "string" || value === "") this.add(path, "must be a non-empty string");
    else if (!namePattern.test(value))
      this.add(path, "must be 1-256 letters, digits or . _ : / @ = + -, starting with a letter or digit");
    return value as string;
  }

  positiveInteger(value: unknown, path: string, fallback: number): number;
  positiveInteger(value: unknown, path: string, fallback: number | undefined): number | undefined;
  positiveInteger(value: unknown, path: string, fallback: number | undefined): number | undefined {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      this.add(path, `must be a positive integer (got ${describe(value)})`);
      return fallback;
    }
    return value;
  }

  timestamp(value: unknown, path: string): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
      this.add(path, `must be a non-negative integer of milliseconds (got ${describe(value)})`);
    return value as number;
  }

  eventId(value: unknown, path: string): EventIdParts | undefined {
    const parts = parseEventId(value);
    if (!parts) this.add(path, `must be an event id <ms>-<seq> (got ${describe(value)})`);
    return parts;
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined)
    return String(value);
  return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A validated append. `fields` keep the caller's order; `payloadJson` is absent without payload. */
export interface AppendArguments {
  readonly stream: string;
  readonly fields: ReadonlyArray<readonly [string, string]>;
  readonly payloadJson: string | undefined;
  readonly maxLen: number;
  readonly ttlSeconds: number;
  readonly maxAgeMs: number | undefined;
}

export function appendArguments(
  stream: unknown,
  record: unknown,
  options: EventAppendOptions | undefined,
  defaults: EventRetentionDefaults,
): AppendArguments {
  const check = new ArgumentCheck();
  check.name(stream, "stream");
  const fields: Array<[string, string]> = [];
  let payloadJson: string | undefined;
  let bytes = 0;
  if (!isPlainObject(record)) check.add("record", "must be an object {fields, payload?}");
  else {
    const given = record.fields;
    if (!isPlainObject(given)) check.add("record.fields", "must be an object of string values");
    else {
      const entries = Object.entries(given);
      if (entries.length > MAX_EVENT_FIELDS)
        check.add("record.fields", `has ${entries.length} fields; at most ${MAX_EVENT_FIELDS}`);
      for (const [name, value] of entries) {
        if (!fieldNamePattern.test(name))
          check.add(`record.fields.${name}`, "name must be a letter then up to 63 letters, digits, _ . -");
        else if (typeof value !== "string")
          check.add(`record.fields.${name}`, `must be a string (got ${describe(value)})`);
        else {
          fields.push([name, value]);
          bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
        }
      }
    }
    if (record.payload !== undefined) {
      try {
        payloadJson = JSON.stringify(record.payload);
        if (payloadJson === undefined) check.add("record.payload", "must be a JSON value");
        else bytes += Buffer.byteLength(payloadJson);
      } catch (error) {
        check.add("record.payload", `must be JSON-serialisable (${(error as Error).message})`);
      }
    }
    if (bytes > MAX_EVENT_RECORD_BYTES) check.add("record", `is ${bytes} bytes; at most ${MAX_EVENT_RECORD_BYTES}`);
  }
  const opts = optionsObject(check, options);
  const args = {
    stream: stream as string,
    fields,
    payloadJson,
    maxLen: check.positiveInteger(opts.maxLen, "options.maxLen", defaults.streamMaxLen),
    ttlSeconds: check.positiveInteger(opts.ttlSeconds, "options.ttlSeconds", defaults.streamTtlSeconds),
    maxAgeMs: check.positiveInteger(opts.maxAgeMs, "options.maxAgeMs", defaults.streamMaxAgeMs),
  };
  check.done();
  return args;
}

/** Most streams one `appendEach` writes to. */
const MAX_APPEND_STREAMS = 16;

/**
 * The arguments of `appendEach`: every stream name checked (violations name `streams[i]`), the
 * record and options once; one AppendArguments per stream, in order.
 */
export function appendEachArguments(
  streams: unknown,
  record: unknown,
  options: EventAppendOptions | undefined,
  defaults: EventRetentionDefaults,
): AppendArguments[] {
  const check = new ArgumentCheck();
  if (!Array.isArray(streams) || streams.length === 0 || streams.length > MAX_APPEND_STREAMS)
    check.add("streams", `must be 1-${MAX_APPEND_STREAMS} stream names`);
  else for (const [i, stream] of streams.entries()) check.name(stream, `streams[${i}]`);
  check.done();
  const first = appendArguments((streams as string[])[0], record, options, defaults);
  return (streams as string[]).map((stream) => ({ ...first, stream }));
}

function optionsObject<T extends object>(
  check: ArgumentCheck,
  options: T | undefined,
): Partial<Record<keyof T, unknown>> {
  if (options === undefined) return {};
  if (!isPlainObject(options)) {
    check.add("options", "must be an object");
    return {};
  }
  return options as Partial<Record<keyof T, unknown>>;
}

/** A validated read: inclusive id bounds (`empty` when they exclude everything). */
export interface ReadArguments {
  readonly stream: string;
  readonly lo: EventIdParts;
  readonly hi: EventIdParts;
  readonly limit: number;
  readonly reverse: boolean;
  readonly empty: boolean;
}

export function readArguments(stream: unknown, options: EventReadOptions | undefined): ReadArguments {
  const check = new ArgumentCheck();
  check.name(stream, "stream");
  const opts = optionsObject(check, options);
  let lo: EventIdParts = ZERO_ID;
  let hi: EventIdParts = { ms: Number.MAX_SAFE_INTEGER, seq: MAX_SEQ };
  let empty = false;
  const raise = (bound: EventIdParts) => {
    if (bound.ms > lo.ms || (bound.ms === lo.ms && bound.seq > lo.seq)) lo = bound;
  };
  const lower = (bound: EventIdParts | undefined) => {
    if (!bound) empty = true;
    else if (bound.ms < hi.ms || (bound.ms === hi.ms && bound.seq < hi.seq)) hi = bound;
  };
  if (opts.fromMs !== undefined) raise({ ms: check.timestamp(opts.fromMs, "options.fromMs"), seq: 0 });
  if (opts.toMs !== undefined) lower({ ms: check.timestamp(opts.toMs, "options.toMs"), seq: MAX_SEQ });
  if (opts.afterId !== undefined) {
    const after = check.eventId(opts.afterId, "options.afterId");
    if (after) raise(nextIdParts(after));
  }
  if (opts.beforeId !== undefined) {
    const before = check.eventId(opts.beforeId, "options.beforeId");
    if (before) lower(previousIdParts(before));
  }
  let limit = DEFAULT_EVENT_READ_LIMIT;
  if (opts.limit !== undefined) {
    const value = opts.limit;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > MAX_EVENT_READ_LIMIT)
      check.add("options.limit", `must be an integer from 1 to ${MAX_EVENT_READ_LIMIT} (got ${describe(value)})`);
    else limit = value;
  }
  if (opts.reverse !== undefined && typeof opts.reverse !== "boolean")
    check.add("options.reverse", `must be a boolean (got ${describe(opts.reverse)})`);
  check.done();
  if (lo.ms > hi.ms || (lo.ms === hi.ms && lo.seq > hi.seq)) empty = true;
  return { stream: stream as string, lo, hi, limit, reverse: opts.reverse === true, empty };
}

/** A validated subscription: distinct streams and, unless starting at "now", a cursor per stream. */
export interface SubscribeArguments {
  readonly streams: readonly string[];
  readonly after: ReadonlyMap<string, EventIdParts> | undefined;
  readonly signal: AbortSignal | undefined;
}

export function subscribeArguments(streams: unknown, options: EventSubscribeOptions | undefined): SubscribeArguments {
  const check = new ArgumentCheck();
  const list = typeof streams === "string" ? [streams] : Array.isArray(streams) ? (streams as unknown[]) : undefined;
  if (!list || list.length === 0) check.add("streams", "must be a stream name or a non-empty list of them");
  const names = [...new Set(list ?? [])];
  names.forEach((name, i) => {
    check.name(name, typeof streams === "string" ? "streams" : `streams[${i}]`);
  });
  const opts = optionsObject(check, options);
  let after: Map<string, EventIdParts> | undefined;
  if (typeof opts.afterId === "string") {
    const parts = check.eventId(opts.afterId, "options.afterId");
    if (parts) after = new Map(names.map((name) => [name as string, parts]));
  } else if (isPlainObject(opts.afterId)) {
    const given = opts.afterId;
    after = new Map(names.map((name) => [name as string, ZERO_ID]));
    for (const [name, id] of Object.entries(given)) {
      const parts = check.eventId(id, `options.afterId.${name}`);
      if (!after.has(name)) check.add(`options.afterId.${name}`, "names a stream that is not subscribed");
      else if (parts) after.set(name, parts);
    }
  } else if (opts.afterId !== undefined) check.add("options.afterId", "must be an event id or a map stream → id");
  const signal = opts.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) check.add("options.signal", "must be an AbortSignal");
  check.done();
  return { streams: names as string[], after, signal: signal as AbortSignal | undefined };
}

/** A validated increment. */
export interface IncrArguments {
  readonly key: string;
  readonly by: number;
  readonly ttlSeconds: number;
}

export function incrArguments(
  key: unknown,
  by: unknown,
  options: CounterOptions | undefined,
  defaults: EventRetentionDefaults,
): IncrArguments {
  const check = new ArgumentCheck();
  check.name(key, "key");
  if (by !== undefined && (typeof by !== "number" || !Number.isSafeInteger(by)))
    check.add("by", `must be a safe integer (got ${describe(by)})`);
  const opts = optionsObject(check, options);
  const ttlSeconds = check.positiveInteger(opts.ttlSeconds, "options.ttlSeconds", defaults.counterTtlSeconds);
  check.done();
  return { key: key as string, by: (by as number | undefined) ?? 1, ttlSeconds };
}

/** A validated name (counter key or series). */
export function nameArgument(value: unknown, path: string): string {
  const check = new ArgumentCheck();
  check.name(value, path);
  check.done();
  return value as string;
}

/** A validated sample: `timestampMs` already rounded down to the resolution. */
export interface SampleArguments {
  readonly series: string;
  readonly timestampMs: number;
  readonly value: number;
  readonly maxPoints: number;
  readonly maxAgeMs: number;
}

export function sampleArguments(
  series: unknown,
  timestampMs: unknown,
  value: unknown,
  options: SeriesSampleOptions | undefined,
  defaults: EventRetentionDefaults,
): SampleArguments {
  const check = new ArgumentCheck();
  check.name(series, "series");
  const ts = check.timestamp(timestampMs, "timestampMs");
  if (typeof value !== "number" || !Number.isFinite(value))
    check.add("value", `must be a finite number (got ${describe(value)})`);
  const opts = optionsObject(check, options);
  const maxPoints = check.positiveInteger(opts.maxPoints, "options.maxPoints", defaults.seriesMaxPoints);
  const maxAgeMs = check.positiveInteger(opts.maxAgeMs, "options.maxAgeMs", defaults.seriesMaxAgeMs);
  const resolution = check.positiveInteger(opts.resolutionMs, "options.resolutionMs", defaults.seriesResolutionMs);
  check.done();
  return { series: series as string, timestampMs: ts - (ts % resolution), value: value as number, maxPoints, maxAgeMs };
}

/** A validated range query. */
export function rangeArguments(
  series: unknown,
  fromMs: unknown,
  toMs: unknown,
): { series: string; fromMs: number; toMs: number } {
  const check = new ArgumentCheck();
  check.name(series, "series");
  const from = check.timestamp(fromMs, "fromMs");
  const to = check.timestamp(toMs, "toMs");
  if (typeof from === "number" && typeof to === "number" && from > to) check.add("toMs", "must not be before fromMs");
  check.done();
  return { series: series as string, fromMs: from, toMs: to };
}

/** Store defaults with `given` applied, checked (used by the factory for `config.defaults`). */
export function resolveRetention(
  given: unknown,
  base: EventRetentionDefaults,
  path: string,
  check: ArgumentCheck,
): EventRetentionDefaults {
  if (given === undefined) return base;
  if (!isPlainObject(given)) {
    check.add(path, "must be an object");
    return base;
  }
  const known = Object.keys(base);
  for (const key of Object.keys(given))
    if (!known.includes(key)) check.add(`${path}.${key}`, "is not a retention setting");
  const pick = (key: keyof EventRetentionDefaults) => check.positiveInteger(given[key], `${path}.${key}`, base[key]);
  return {
    streamMaxLen: pick("streamMaxLen") as number,
    streamTtlSeconds: pick("streamTtlSeconds") as number,
    streamMaxAgeMs: pick("streamMaxAgeMs"),
    counterTtlSeconds: pick("counterTtlSeconds") as number,
    seriesMaxPoints: pick("seriesMaxPoints") as number,
    seriesMaxAgeMs: pick("seriesMaxAgeMs") as number,
    seriesResolutionMs: pick("seriesResolutionMs") as number,
  };
}
