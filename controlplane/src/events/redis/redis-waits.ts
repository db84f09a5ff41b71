import type { Redis } from "ioredis";

const noop = () => {};

/** Resolves with the promise's value, or `undefined` as soon as `signal` aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Resolves when `connection` is ready, `signal` aborts, or after a second (the caller re-checks). */
export function untilReady(connection: Redis, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      connection.off("ready", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, 1_000);
    connection.once("ready", done);
    signal.addEventListener("abort", done, { once: true });
    if (connection.status === "end" && !signal.aborted) connection.connect().catch(noop);
  });
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return untilAborted(new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), signal).then(noop);
}
