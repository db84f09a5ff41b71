/**
 * Key ranges over byte-ordered keys, as etcd defines them: a prefix covers `[prefix, prefixEnd(prefix))`.
 */

/**
 * The smallest byte string greater than every string starting with `prefix`, or `undefined` when there is
 * none (an empty prefix, or one made only of 0xff bytes): the range then has no upper bound.
 */
export function prefixEnd(prefix: Uint8Array): Buffer | undefined {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return undefined;
}

/** A half-open byte range `[start, end)`; no `end` means unbounded above. */
export interface KeyRange {
  readonly start: Buffer;
  readonly end: Buffer | undefined;
}

/**
 * The keys starting with `prefix` and, when `startAfter` is given, strictly greater than it.
 * `empty` is true when no key can be in the range.
 */
export function prefixRange(prefix: Buffer, startAfter?: Buffer): KeyRange & { empty: boolean } {
  const end = prefixEnd(prefix);
  let start = prefix;
  if (startAfter !== undefined) {
    // The smallest key strictly after `startAfter` is `startAfter` followed by a zero byte.
    const next = Buffer.concat([startAfter, Buffer.of(0)]);
    if (Buffer.compare(next, start) > 0) start = next;
  }
  const empty = end !== undefined && Buffer.compare(start, end) >= 0;
  return { start, end, empty };
}

/** Whether `key` starts with `prefix` (byte-wise). */
export function hasPrefix(key: Uint8Array, prefix: Uint8Array): boolean {
  if (key.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (key[i] !== prefix[i]) return false;
  return true;
}
