/**
 * State store benchmark (`npm run bench:store`). Prints one JSON object per line:
 *   {store, op, mode, n, opsPerSec, p50Ms, p99Ms, ...}
 * for single puts, 128-put transactions (opsPerSec counts puts; p50Ms/p99Ms are per transaction) and
 * watch latency (put → event received), on etcd and on the embedded store (temp dir, fsync per commit),
 * plus the same 128-put transaction sent straight through `etcd3` (store "etcd3-direct") and a final
 * line `{store: "etcd", op: "txn-128-overhead", ratio}` = our txn p50 / direct txn p50 (serial).
 * "serial" rows measure latency (one op at a time); "parallel-N" rows measure throughput (N in flight).
 *
 *   npm run bench:store -- [--etcd http://127.0.0.1:2379] [--puts 300] [--txns 60] [--watches 100]
 *                          [--concurrency 16] [--data-dir DIR] [--only etcd|embedded]
 *
 * etcd defaults to PERSYS_TEST_ETCD_ENDPOINTS. Defaults finish in well under a minute.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { StateStore, TxnOp } from "@persys/controlplane";
import { Etcd3 } from "etcd3";

const { values: flags } = parseArgs({
  options: {
    etcd: { type: "string" },
    puts: { type: "string", default: "300" },
    txns: { type: "string", default: "60" },
    watches: { type: "string", default: "100" },
    concurrency: { type: "string", default: "16" },
    "data-dir": { type: "string" },
    only: { type: "string" },
  },
});
const PUTS = Number(flags.puts);
const TXNS = Number(flags.txns);
const WATCHES = Number(flags.watches);
const CONCURRENCY = Number(flags.concurrency);
const BATCH = 128;
const VALUE = Buffer.alloc(256, "v");
const run = `bench/${process.pid}-${Date.now().toString(36)}`;

interface Row {
  store: string;
  op: string;
  mode: string;
  n: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  [extra: string]: unknown;
}

const emit = (row: Row | Record<string, unknown>) => console.log(JSON.stringify(row));
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Runs `op(i)` for i < n with `concurrency` in flight; returns per-op latencies (ms) and wall time. */
async function measure(n: number, concurrency: number, op: (i: number) => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        await op(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const wallMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return { latencies, wallMs };
}

function row(
  store: string,
  op: string,
  concurrency: number,
  n: number,
  result: Awaited<ReturnType<typeof measure>>,
  opsPerItem = 1,
  extra = {},
): Row {
  return {
    store,
    op,
    mode: concurrency === 1 ? "serial" : `parallel-${concurrency}`,
    n,
    opsPerSec: round((n * opsPerItem * 1000) / result.wallMs, 1),
    p50Ms: round(quantile(result.latencies, 0.5)),
    p99Ms: round(quantile(result.latencies, 0.99)),
    ...extra,
  };
}

const puts = (prefix: string, i: number): TxnOp[] =>
  Array.from({ length: BATCH }, (_, j) => ({ type: "put", key: `${prefix}/${i}/${j}`, value: VALUE }));

async function benchStore(name: string, store: StateStore, extra: Record<string, unknown>): Promise<Row[]> {
  const rows: Row[] = [];
  const prefix = `${run}/${name}`;
  const add = (r: Row) => {
    rows.push(r);
    emit(r);
  };
  // Warm up (JIT, connection) with the same operations as measured, as benchDirect does.
  for (let i = 0; i < 20; i++) await store.put(`${prefix}/warm/${i}`, VALUE);
  for (let i = 0; i < 5; i++) await store.txn({ success: puts(`${prefix}/warm-txn`, i) });

  add(row(name, "put", 1, PUTS, await measure(PUTS, 1, (i) => store.put(`${prefix}/put-s/${i}`, VALUE)), 1, extra));
  const parallelPuts = PUTS * 4;
  add(
    row(
      name,
      "put",
      CONCURRENCY,
      parallelPuts,
      await measure(parallelPuts, CONCURRENCY, (i) => store.put(`${prefix}/put-p/${i}`, VALUE)),
      1,
      extra,
    ),
  );
  const txn = (tag: string) => (i: number) => store.txn({ success: puts(`${prefix}/${tag}`, i) });
  add(
    row(name, "txn-128", 1, TXNS, await measure(TXNS, 1, txn("txn-s")), BATCH, {
      ...extra,
      opsAre: "puts",
      latencyIs: "txn",
    }),
  );
  const parallelTxns = TXNS * 2;
  add(
    row(name, "txn-128", CONCURRENCY, parallelTxns, await measure(parallelTxns, CONCURRENCY, txn("txn-p")), BATCH, {
      ...extra,
      opsAre: "puts",
      latencyIs: "txn",
    }),
  );

  // Watch latency: time from starting a put to the watcher receiving its event, one at a time.
  const waiting = new Map<string, () => void>();
  const watch = await store.watch(`${prefix}/watch/`, {
    onEvents: ({ events }) => {
      for (const e of events) waiting.get(e.key)?.();
    },
  });
  add(
    row(
      name,
      "watch",
      1,
      WATCHES,
      await measure(WATCHES, 1, async (i) => {
        const key = `${prefix}/watch/${i}`;
        const seen = new Promise<void>((resolve) => waiting.set(key, resolve));
        await store.put(key, VALUE);
        await seen;
        waiting.delete(key);
      }),
      1,
      { ...extra, latencyIs: "put-to-event" },
    ),
  );
  await watch.cancel();
  await store.deletePrefix(`${prefix}/`);
  return rows;
}

/** The same 128-put transaction straight through etcd3's KV client, with no layer of ours. */
async function benchDirect(endpoints: string[]): Promise<Row[]> {
  const client = new Etcd3({ hosts: endpoints });
  const prefix = `${run}/etcd3-direct`;
  const txn = (tag: string) => (i: number) =>
    client.kv.txn({
      success: Array.from({ length: BATCH }, (_, j) => ({
        request_put: { key: Buffer.from(`${prefix}/${tag}/${i}/${j}`), value: VALUE },
      })),
    });
  try {
    for (let i = 0; i < 5; i++) await txn("warm")(i);
    const serial = row("etcd3-direct", "txn-128", 1, TXNS, await measure(TXNS, 1, txn("s")), BATCH, {
      opsAre: "puts",
      latencyIs: "txn",
    });
    emit(serial);
    const parallel = row(
      "etcd3-direct",
      "txn-128",
      CONCURRENCY,
      TXNS * 2,
      await measure(TXNS * 2, CONCURRENCY, txn("p")),
      BATCH,
      {
        opsAre: "puts",
        latencyIs: "txn",
      },
    );
    emit(parallel);
    const end = Buffer.from(`${prefix}0`);
    await client.kv.deleteRange({ key: Buffer.from(`${prefix}/`), range_end: end });
    return [serial, parallel];
  } finally {
    client.close();
  }
}

async function main(): Promise<void> {
  const { openStateStore } = await import("@persys/controlplane");
  const endpoints = (flags.etcd ?? process.env.PERSYS_TEST_ETCD_ENDPOINTS ?? "").split(",").filter(Boolean);
  if (flags.only !== "embedded") {
    if (endpoints.length === 0) {
      throw new Error(
        "no etcd: pass --etcd http://127.0.0.1:2379 or set PERSYS_TEST_ETCD_ENDPOINTS (or --only embedded)",
      );
    }
    const store = await openStateStore({ kind: "etcd", endpoints });
    const ours = await benchStore("etcd", store, { endpoint: endpoints.join(",") });
    await store.close();
    const direct = await benchDirect(endpoints);
    const oursSerial = ours.find((r) => r.op === "txn-128" && r.mode === "serial")!;
    const oursParallel = ours.find((r) => r.op === "txn-128" && r.mode !== "serial")!;
    emit({
      store: "etcd",
      op: "txn-128-overhead",
      ratio: round(oursSerial.p50Ms / direct[0]!.p50Ms),
      basis: "p50 txn latency, ours / etcd3-direct, serial",
      throughputRatio: round(direct[1]!.opsPerSec / oursParallel.opsPerSec),
    });
  }
  if (flags.only !== "etcd") {
    const own = !flags["data-dir"];
    const dataDir = flags["data-dir"] ?? mkdtempSync(join(tmpdir(), "persys-bench-"));
    const store = await openStateStore({ kind: "embedded", dataDir });
    try {
      await benchStore("embedded", store, { dataDir, sync: "WAL synchronous=FULL" });
    } finally {
      await store.close();
      if (own) rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

await main();
