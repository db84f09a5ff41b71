import type { Redis } from "ioredis";

import { untilAborted } from "../pull-subscription.js";

const noop = () => {};

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
