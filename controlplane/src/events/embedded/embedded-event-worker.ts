/**
 * The worker thread of a ThreadedEventStore: owns the EmbeddedEventStore (SQLite, its commits,
 * checkpoints and sweeps) so none of that runs on the control plane's thread. Serves the requests
 * of threaded-event-store.ts (see event-worker-protocol.ts) and reports health changes.
 */
import { parentPort, workerData } from "node:worker_threads";
import { EmbeddedEventStore, type EmbeddedEventStoreOptions } from "./embedded-event-store.js";
import { toWire, type WorkerReply, type WorkerRequest } from "./event-worker-protocol.js";

const port = parentPort!;
const outbox: WorkerReply[] = [];
const send = (reply: WorkerReply) => {
  outbox.push(reply);
  if (outbox.length === 1) setImmediate(() => port.postMessage(outbox.splice(0)));
};

let store: EmbeddedEventStore;
try {
  store = await EmbeddedEventStore.open(workerData as EmbeddedEventStoreOptions);
} catch (error) {
  port.postMessage([{ failed: toWire(error) }]);
  throw error;
}
store.onHealthChange((health) => send({ health }));
const waiting = new Map<number, AbortController>();

async function serve(id: number, method: string, args: readonly unknown[]): Promise<unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: the arguments of whichever method is asked for
  const a = args as any[];
  switch (method) {
    case "append":
      return store.append(a[0], a[1], a[2]);
    case "appendEach":
      return store.appendEach(a[0], a[1], a[2]);
    case "read":
      return store.read(a[0], a[1]);
    case "incr":
      return store.incr(a[0], a[1], a[2]);
    case "getCounter":
      return store.getCounter(a[0]);
    case "addSample":
      return store.addSample(a[0], a[1], a[2], a[3]);
    case "range":
      return store.range(a[0], a[1], a[2]);
    case "lastIds":
      return store.lastIds(a[0]);
    case "fetchAfter": {
      const stop = new AbortController();
      waiting.set(id, stop);
      try {
        return await store.fetchAfter(a[0], a[1], stop.signal);
      } finally {
        waiting.delete(id);
      }
    }
    case "close":
      for (const stop of waiting.values()) stop.abort();
      await store.close();
      return undefined;
    default:
      throw new Error(`the event store worker has no method ${method}`);
  }
}

port.on("message", (batch: WorkerRequest[]) => {
  for (const request of batch) {
    if ("cancel" in request) {
      waiting.get(request.cancel)?.abort();
      continue;
    }
    serve(request.id, request.method, request.args).then(
      (result) => send({ id: request.id, result }),
      (error: unknown) => send({ id: request.id, error: toWire(error) }),
    );
  }
});
port.postMessage([{ ready: true, health: store.health() }]);
