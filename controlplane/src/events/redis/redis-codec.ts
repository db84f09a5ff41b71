/** Encoding of requests to and decoding of replies from Redis for the event store. */
import { type EventIdParts, formatEventId, MAX_SEQ, parseEventId } from "../event-id.js";
import type { EventPayload, SeriesSample, StoredEvent } from "../event-store.js";

/** The stream field that holds the payload JSON (`""` for none); user field names cannot start with `_`. */
export const PAYLOAD_FIELD = "_p";

/** One XRANGE/XREAD entry: id and flat field/value list. */
export type StreamEntry = [id: string, fields: string[]];

/** An event from a stream entry. */
export function eventFromEntry(stream: string, [id, flat]: StreamEntry): StoredEvent {
  const fields: Record<string, string> = {};
  let payload: EventPayload | undefined;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i] as string;
    const value = flat[i + 1] as string;
    if (name !== PAYLOAD_FIELD) fields[name] = value;
    else if (value !== "") payload = parsePayload(value);
  }
  const timeMs = parseEventId(id)?.ms ?? 0;
  return payload === undefined ? { stream, id, timeMs, fields } : { stream, id, timeMs, fields, payload };
}

function parsePayload(json: string): EventPayload | undefined {
  try {
    return JSON.parse(json) as EventPayload;
  } catch {
    return undefined; // written by something else than this store; the fields still show
  }
}

/** Points from ZRANGEBYSCORE members `<ts>:<value>`. */
export function samplesFromMembers(members: readonly string[]): SeriesSample[] {
  const samples: SeriesSample[] = [];
  for (const member of members) {
    const colon = member.indexOf(":");
    const timestampMs = Number(member.slice(0, colon));
    const value = Number(member.slice(colon + 1));
    if (colon > 0 && Number.isFinite(timestampMs) && Number.isFinite(value)) samples.push({ timestampMs, value });
  }
  return samples;
}

/** XRANGE start for an inclusive lower bound. */
export function lowerBound(lo: EventIdParts): string {
  return lo.ms === 0 && lo.seq === 0 ? "-" : formatEventId(lo);
}

/** XRANGE end for an inclusive upper bound (`<ms>` alone means the whole millisecond). */
export function upperBound(hi: EventIdParts): string {
  if (hi.ms >= Number.MAX_SAFE_INTEGER) return "+";
  return hi.seq >= MAX_SEQ ? String(hi.ms) : formatEventId(hi);
}
