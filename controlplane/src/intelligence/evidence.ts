import { api, type ErrorCode, errorCodes, errorRegistry } from "@persys/schema";
import type { StoredEvent } from "../events/event-store.js";
import { rankLexically } from "./lexical-ranking.js";

/** Evidence citing one stored event by id. */
export function eventEvidence(event: StoredEvent, relevance = 0): api.Evidence {
  return {
    kind: api.EvidenceKind.EVIDENCE_KIND_EVENT,
    ref: event.id,
    summary: event.fields.message ?? "",
    time: new Date(event.timeMs),
    relevance,
    type: event.fields.type ?? "",
    nodeId: event.fields.node ?? "",
  };
}

export function evidence(
  kind: api.EvidenceKind,
  ref: string,
  summary: string,
  extra: { time?: Date; nodeId?: string; type?: string } = {},
): api.Evidence {
  return {
    kind,
    ref,
    summary,
    relevance: 0,
    type: extra.type ?? "",
    nodeId: extra.nodeId ?? "",
    ...(extra.time ? { time: extra.time } : {}),
  };
}

/** The wire enum of an error code name. */
export const wireCode = (code: ErrorCode | undefined): api.ErrorCode =>
  code ? api.errorCodeFromJSON(code) : api.ErrorCode.ERROR_CODE_UNSPECIFIED;

/** The registry name of a wire error code, when it is one. */
export function codeName(code: api.ErrorCode): ErrorCode | undefined {
  const name = api.errorCodeToJSON(code);
  return (errorCodes as readonly string[]).includes(name) ? (name as ErrorCode) : undefined;
}

/**
 * The error registry's remediation texts most relevant to `query`, best first. Codes in `cited`
 * come first whatever their score (they are what the causes name).
 */
export function rankRemediations(query: string, cited: readonly ErrorCode[], limit = 3): api.Remediation[] {
  const ranked = rankLexically(
    query,
    errorCodes,
    (code) => `${code} ${errorRegistry[code].summary} ${errorRegistry[code].remediation}`,
    (code) => (cited.includes(code) ? 10 : 1),
  );
  const order = [...new Set([...cited, ...ranked.map((r) => r.item)])].slice(0, limit);
  return order.map((code) => ({
    code: wireCode(code),
    summary: errorRegistry[code].summary,
    text: errorRegistry[code].remediation,
    relevance: ranked.find((r) => r.item === code)?.score ?? 0,
  }));
}

/** `12:03:10Z`-style time of day for messages (ISO date kept when not today). */
export function clock(ms: number, now: number): string {
  const iso = new Date(ms).toISOString();
  return iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10) ? `${iso.slice(11, 19)}Z` : iso;
}
