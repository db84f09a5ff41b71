/**
 * Helpers shared by the state store conformance suites: the harness each implementation provides, a
 * watch recorder, and small value helpers.
 */
import { randomUUID } from "node:crypto";
import {
  decodeText,
  encodeText,
  type KeyValue,
  type StateStore,
  type WatchBatch,
  type WatchEvent,
} from "@persys/controlplane";
import { PersysError } from "@persys/schema";
import { expect } from "vitest";

/** What an implementation gives the conformance suite. */
export interface StateStoreHarness {
  /**
   * A new store. etcd: a new client of the shared server (tests isolate themselves by key prefix).
   * Embedded: a store in a fresh data dir. The caller closes it.
   */
  open(): Promise<StateStore>;
  /** A store no other test or suite uses, for store-wide operations such as compaction. */
  openExclusive(): Promise<{ store: StateStore; dispose(): Promise<void> }>;
}

/** A key prefix no other run, suite or test shares. */
export function uniquePrefix(name: string): string {
  return `conformance/${randomUUID().slice(0, 8)}/${name}/`;
}

export const bytes = (text: string): Uint8Array => encodeText(text);
export const textOf = (kv: KeyValue | undefined): string | undefined => (kv ? decodeText(kv.value) : undefined);

/** A watch event reduced to what a user compares: type, key, revision and (for puts) the value. */
export function summary(event: WatchEvent): string {
  return event.type === "put"
    ? `put ${event.key}@${event.revision}=${decodeText(event.kv.value)}`
    : `delete ${event.key}@${event.revision}`;
}

/** Collects the batches a watch delivers and lets a test wait for a condition on them. */
export class WatchRecorder {
  readonly batches: WatchBatch[] = [];
  private waiters: (() => void)[] = [];

  readonly onEvents = (batch: WatchBatch): void => {
    this.batches.push(batch);
    for (const wake of this.waiters.splice(0)) wake();
  };

  get events(): WatchEvent[] {
    return this.batches.flatMap((batch) => batch.events);
  }

  /** Resolves once `done(events)` holds; fails the test after `timeoutMs` showing what arrived. */
  async until(done: (events: WatchEvent[]) => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.events)) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; got: ${JSON.stringify(this.events.map(summary))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once at least `n` events arrived. */
  untilCount(n: number, timeoutMs?: number): Promise<void> {
    return this.until((events) => events.length >= n, `${n} events`, timeoutMs);
  }
}

/** Awaits `promise` expecting a PersysError with `code`; returns it for further checks. */
export async function rejection(promise: Promise<unknown>, code: string): Promise<PersysError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected the call to be rejected").toBeInstanceOf(PersysError);
  const typed = error as PersysError;
  expect({ code: typed.code, message: typed.message }).toMatchObject({ code });
  return typed;
}

/** The field paths a PersysError names. */
export const paths = (error: PersysError): string[] => error.details.map((d) => d.path);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
