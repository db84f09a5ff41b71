import { type FieldViolation, invalid } from "@persys/schema";
import { hasPrefix } from "./key-range.js";
import {
  type Compare,
  MAX_TXN_OPS,
  type PutOptions,
  type RangeOptions,
  type TxnOp,
  type TxnRequest,
  type WatchOptions,
} from "./state-store.js";

/**
 * Argument checks shared by both state store implementations, so that both reject the same input with
 * the same INVALID_ARGUMENT error (every offending field named in `details`) before touching storage.
 */

/** Longest key accepted, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 4096;
/** Largest value accepted (etcd rejects requests over 1.5 MiB by default). */
export const MAX_VALUE_BYTES = 1024 * 1024;
/** Longest lease TTL accepted, in seconds (etcd's maximum). */
export const MAX_LEASE_TTL = 9_000_000_000;

/** The limits both stores enforce, for callers that split large writes. */
export const stateStoreLimits = Object.freeze({
  maxKeyBytes: MAX_KEY_BYTES,
  maxValueBytes: MAX_VALUE_BYTES,
  maxLeaseTtl: MAX_LEASE_TTL,
  maxTxnOps: MAX_TXN_OPS,
});

const MAX_INT64 = (1n << 63n) - 1n;
const COMPARE_TARGETS = new Set(["version", "createRevision", "modRevision", "value"]);
const COMPARE_OPS = new Set(["=", "!=", "<", ">"]);

/** Collects violations; `check()` throws one INVALID_ARGUMENT error naming all of them. */
export class Violations {
  readonly list: FieldViolation[] = [];

  add(path: string, reason: string): void {
    this.list.push({ path, reason });
  }

  check(): void {
    if (this.list.length > 0) throw invalid("INVALID_ARGUMENT", this.list, "state store request");
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkString(v: Violations, value: unknown, path: string, allowEmpty: boolean): value is string {
  if (typeof value !== "string") {
    v.add(path, `must be a string, got ${describe(value)}`);
    return false;
  }
  if (!allowEmpty && value.length === 0) {
    v.add(path, "must not be empty");
    return false;
  }
  if (Buffer.byteLength(value, "utf8") > MAX_KEY_BYTES) {
    v.add(path, `must be at most ${MAX_KEY_BYTES} bytes`);
    return false;
  }
  return true;
}

/** A key: a non-empty string of at most MAX_KEY_BYTES. */
export function checkKey(v: Violations, key: unknown, path = "key"): void {
  checkString(v, key, path, false);
}

/** A prefix: a string, empty allowed unless `nonEmpty`. */
export function checkPrefix(v: Violations, prefix: unknown, path = "prefix", nonEmpty = false): void {
  checkString(v, prefix, path, !nonEmpty);
}

export function checkValue(v: Violations, value: unknown, path = "value"): void {
  if (!(value instanceof Uint8Array)) {
    v.add(path, `must be bytes (Uint8Array or Buffer), got ${describe(value)}; use encodeJson or encodeText`);
  } else if (value.byteLength > MAX_VALUE_BYTES) {
    v.add(path, `must be at most ${MAX_VALUE_BYTES} bytes, got ${value.byteLength}`);
  }
}

/** A lease id: the decimal text of a positive int64. */
export function checkLeaseId(v: Violations, lease: unknown, path = "lease"): void {
  if (typeof lease !== "string" || !/^[1-9][0-9]{0,18}$/.test(lease) || BigInt(lease) > MAX_INT64) {
    v.add(path, `must be a lease id (decimal text of a positive 64-bit integer), got ${describe(lease)}`);
  }
}

function checkOptions(v: Violations, options: unknown, path: string): options is Record<string, unknown> {
  if (options === undefined) return false;
  if (!isRecord(options)) {
    v.add(path, `must be an object, got ${describe(options)}`);
    return false;
  }
  return true;
}

function checkBoolean(v: Violations, value: unknown, path: string): void {
  if (value !== undefined && typeof value !== "boolean") v.add(path, `must be a boolean, got ${describe(value)}`);
}

function checkRevision(v: Violations, value: unknown, path: string, min: number): void {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    v.add(path, `must be an integer >= ${min}, got ${describe(value)}`);
  }
}

export function keyArguments(key: unknown): void {
  const v = new Violations();
  checkKey(v, key);
  v.check();
}

export function putArguments(key: unknown, value: unknown, options: PutOptions | undefined): void {
  const v = new Violations();
  checkKey(v, key);
  checkValue(v, value);
  if (checkOptions(v, options, "options")) {
    if (options.lease !== undefined) checkLeaseId(v, options.lease);
    checkBoolean(v, options.prevKv, "prevKv");
  }
  v.check();
}

export function deleteArguments(keyOrPrefix: unknown, options: unknown, field: "key" | "prefix"): void {
  const v = new Violations();
  if (field === "key") checkKey(v, keyOrPrefix);
  else checkPrefix(v, keyOrPrefix, "prefix", true);
  if (checkOptions(v, options, "options")) checkBoolean(v, options.prevKv, "prevKv");
  v.check();
}

export function rangeArguments(prefix: unknown, options: RangeOptions | undefined): void {
  const v = new Violations();
  checkPrefix(v, prefix);
  if (checkOptions(v, options, "options")) {
    if (options.limit !== undefined) {
      const limit = options.limit;
      if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
        v.add("limit", `must be a positive integer, got ${describe(limit)}`);
      }
    }
    if (options.startAfter !== undefined) checkPrefix(v, options.startAfter, "startAfter");
    checkBoolean(v, options.keysOnly, "keysOnly");
  }
  v.check();
}

export function watchArguments(prefix: unknown, options: WatchOptions | undefined): void {
  const v = new Violations();
  checkPrefix(v, prefix);
  if (!isRecord(options)) {
    v.add("options", `must be an object with onEvents, got ${describe(options)}`);
  } else {
    if (typeof options.onEvents !== "function") v.add("onEvents", "must be a function");
    if (options.onError !== undefined && typeof options.onError !== "function") {
      v.add("onError", "must be a function");
    }
    if (options.afterRevision !== undefined) checkRevision(v, options.afterRevision, "afterRevision", 0);
  }
  v.check();
}

export function ttlArgument(ttl: unknown): void {
  const v = new Violations();
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl < 1 || ttl > MAX_LEASE_TTL) {
    v.add("ttl", `must be a whole number of seconds from 1 to ${MAX_LEASE_TTL}, got ${describe(ttl)}`);
  }
  v.check();
}

export function leaseArgument(lease: unknown): void {
  const v = new Violations();
  checkLeaseId(v, lease);
  v.check();
}

export function compactArgument(revision: unknown): void {
  const v = new Violations();
  checkRevision(v, revision, "revision", 1);
  v.check();
}

function checkCompare(v: Violations, compare: unknown, path: string): void {
  if (!isRecord(compare)) {
    v.add(path, `must be an object, got ${describe(compare)}`);
    return;
  }
  checkKey(v, compare.key, `${path}.key`);
  if (!COMPARE_OPS.has(compare.op as string)) v.add(`${path}.op`, "must be one of =, !=, <, >");
  if (!COMPARE_TARGETS.has(compare.target as string)) {
    v.add(`${path}.target`, "must be one of version, createRevision, modRevision, value");
  } else if (compare.target === "value") {
    checkValue(v, compare.value, `${path}.value`);
  } else {
    checkRevision(v, compare.value, `${path}.value`, 0);
  }
}

function checkOp(v: Violations, op: unknown, path: string): op is TxnOp {
  if (!isRecord(op)) {
    v.add(path, `must be an object, got ${describe(op)}`);
    return false;
  }
  const before = v.list.length;
  switch (op.type) {
    case "put":
      checkKey(v, op.key, `${path}.key`);
      checkValue(v, op.value, `${path}.value`);
      if (op.lease !== undefined) checkLeaseId(v, op.lease, `${path}.lease`);
      checkBoolean(v, op.prevKv, `${path}.prevKv`);
      break;
    case "delete":
      checkKey(v, op.key, `${path}.key`);
      checkBoolean(v, op.prefix, `${path}.prefix`);
      checkBoolean(v, op.prevKv, `${path}.prevKv`);
      break;
    case "get":
      checkKey(v, op.key, `${path}.key`);
      break;
    default:
      v.add(`${path}.type`, `must be one of put, delete, get, got ${describe(op.type)}`);
  }
  return v.list.length === before;
}

/** etcd's rule: in one branch a key is put at most once and never both put and deleted. */
function checkOverlaps(v: Violations, ops: readonly TxnOp[], branch: string): void {
  const puts = new Map<string, number>();
  const deletes: { key: Buffer; prefix: boolean }[] = [];
  ops.forEach((op) => {
    if (op.type === "delete") deletes.push({ key: Buffer.from(op.key), prefix: op.prefix === true });
  });
  ops.forEach((op, i) => {
    if (op.type !== "put") return;
    if (puts.has(op.key)) {
      v.add(`${branch}[${i}].key`, `is also put by ${branch}[${puts.get(op.key)}]: a key may be put once per txn`);
    }
    puts.set(op.key, i);
    const key = Buffer.from(op.key);
    if (deletes.some((d) => (d.prefix ? hasPrefix(key, d.key) : key.equals(d.key)))) {
      v.add(`${branch}[${i}].key`, "is also deleted in this branch: a key may not be both put and deleted in a txn");
    }
  });
}

function checkBranch(v: Violations, ops: unknown, branch: "success" | "failure"): void {
  if (ops === undefined) return;
  if (!Array.isArray(ops)) {
    v.add(branch, `must be an array, got ${describe(ops)}`);
    return;
  }
  if (ops.length > MAX_TXN_OPS) v.add(branch, `must have at most ${MAX_TXN_OPS} ops, got ${ops.length}`);
  const valid = ops.map((op, i) => checkOp(v, op, `${branch}[${i}]`)).every(Boolean);
  if (valid) checkOverlaps(v, ops as TxnOp[], branch);
}

export function txnArguments(request: TxnRequest | undefined): void {
  const v = new Violations();
  if (!isRecord(request)) {
    v.add("request", `must be an object, got ${describe(request)}`);
    v.check();
    return;
  }
  const compare = request.compare as unknown;
  if (compare !== undefined) {
    if (!Array.isArray(compare)) {
      v.add("compare", `must be an array, got ${describe(compare)}`);
    } else {
      if (compare.length > MAX_TXN_OPS) v.add("compare", `must have at most ${MAX_TXN_OPS} compares`);
      compare.forEach((c: Compare, i) => {
        checkCompare(v, c, `compare[${i}]`);
      });
    }
  }
  checkBranch(v, request.success, "success");
  checkBranch(v, request.failure, "failure");
  v.check();
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value;
}
