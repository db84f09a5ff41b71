import type { EventId } from "./event-store.js";

/** The parts of an event id. `seq` may be `MAX_SEQ` in a range bound ("the end of that millisecond"). */
export interface EventIdParts {
  readonly ms: number;
  readonly seq: number;
}

/** The largest sequence number; in bounds it stands for "every event of that millisecond". */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** Before every event. */
export const ZERO_ID: EventIdParts = Object.freeze({ ms: 0, seq: 0 });

const pattern = /^(\d{1,16})-(\d{1,16})$/;

/** The parts of `id`, or `undefined` when it is not `<ms>-<seq>` with both safe non-negative integers. */
export function parseEventId(id: unknown): EventIdParts | undefined {
  if (typeof id !== "string") return undefined;
  const match = pattern.exec(id);
  if (!match) return undefined;
  const ms = Number(match[1]);
  const seq = Number(match[2]);
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(seq)) return undefined;
  return { ms, seq };
}

/** `<ms>-<seq>`. */
export function formatEventId(parts: EventIdParts): EventId {
  return `${parts.ms}-${parts.seq}`;
}

/** Orders parts: negative when `a` is before `b`, 0 when equal, positive after. */
export function compareIdParts(a: EventIdParts, b: EventIdParts): number {
  return a.ms !== b.ms ? a.ms - b.ms : a.seq - b.seq;
}

/**
 * Orders two event ids by time, then sequence (negative, 0, positive). Throws a `TypeError` for a
 * string that is not an event id, so a sort never silently misorders.
 */
export function compareEventIds(a: EventId, b: EventId): number {
  const left = parseEventId(a);
  const right = parseEventId(b);
  if (!left || !right) throw new TypeError(`not an event id: ${left ? b : a}`);
  return compareIdParts(left, right);
}

/** The time part of an event id (ms since the epoch). Throws a `TypeError` for a non-id. */
export function eventIdTime(id: EventId): number {
  const parts = parseEventId(id);
  if (!parts) throw new TypeError(`not an event id: ${id}`);
  return parts.ms;
}

/** The smallest id after `parts`. */
export function nextIdParts(parts: EventIdParts): EventIdParts {
  return parts.seq >= MAX_SEQ ? { ms: parts.ms + 1, seq: 0 } : { ms: parts.ms, seq: parts.seq + 1 };
}

/** The largest id before `parts`, or `undefined` before `0-0`. */
export function previousIdParts(parts: EventIdParts): EventIdParts | undefined {
  if (parts.seq > 0) return { ms: parts.ms, seq: parts.seq - 1 };
  return parts.ms > 0 ? { ms: parts.ms - 1, seq: MAX_SEQ } : undefined;
}
