/**
 * Render benchmark of the web console: a simulated cluster of 1,000 nodes and 10,000 workloads.
 *
 *   npm run bench:ui -- [--nodes 1000] [--workloads 10000] [--burst 2000]
 *
 * The cluster is a FAKE API built in this process (startRecordedShapeFakeApi): the /v1 routes the
 * console reads, answering in the recorded proto3 JSON shapes of the real control plane (paged lists,
 * SSE watches), so the benchmark measures the browser, not the scheduler. The console itself is the
 * built bundle (ui/dist) served by the real ui-routes. Debian's chromium, headless, loads /ui/ and the
 * console's performance marks give the times. Prints one JSON object:
 *
 *   firstRenderMs       navigation start → the first node cards are drawn
 *   settledOverviewMs   navigation start → every node and workload loaded and the overview drawn
 *   longestTaskMs       the longest main-thread task while loading (a freeze shows here)
 *   burstApplyMs        2,000 workload watch events pushed → the overview counts show them
 *   workloadsViewMs     click on Workloads → the list of 10,000 drawn
 *   filterMs            typing a label filter → the filtered list drawn
 *   scrollFrameMs       scrolling the node grid to the end → next frame
 *   domNodes            elements in the page with the overview drawn (virtualised: small)
 */
import type { ServerResponse } from "node:http";
import { parseArgs } from "node:util";
import Fastify from "fastify";
import { chromium } from "playwright-core";
import { registerUiRoutes } from "../../controlplane/src/api/rest/ui-routes.js";

const { values: flags } = parseArgs({
  options: {
    nodes: { type: "string", default: "1000" },
    workloads: { type: "string", default: "10000" },
    burst: { type: "string", default: "2000" },
  },
});
const nodeCount = Number(flags.nodes);
const workloadCount = Number(flags.workloads);
const burstCount = Number(flags.burst);

type Json = Record<string, any>;

// Browser globals of the page.evaluate callbacks (this file is type-checked without the DOM lib).
declare const window: any;
declare const document: any;
declare const requestAnimationFrame: (callback: () => void) => number;

/** A recorded-shape node (proto3 JSON of persys.api.v1.Node, defaults omitted). */
function fakeNode(i: number): Json {
  const id = `node-${String(i).padStart(4, "0")}`;
  const state = i % 97 === 0 ? "NODE_STATE_NOT_READY" : "NODE_STATE_READY";
  return {
    id,
    labels: { zone: `zone-${i % 3}`, rack: `rack-${i % 40}`, "persys.io/hostname": id },
    state,
    ...(i % 53 === 0 ? { cordoned: true, cordonReason: "maintenance" } : {}),
    capacity: { cpuMillicores: 16000, memoryMib: 65536, diskGib: 500 },
    allocatable: { cpuMillicores: 15000, memoryMib: 61440, diskGib: 480 },
    allocated: { cpuMillicores: (i * 737) % 15000, memoryMib: (i * 4099) % 61440, diskGib: (i * 7) % 480 },
    usage: { cpuMillicores: (i * 311) % 12000, memoryMib: (i * 2039) % 50000, diskGib: (i * 3) % 400 },
    capabilities: i % 4 === 0 ? ["docker", "compose", "libvirt", "kvm"] : ["docker", "compose"],
    supportedKinds: ["WORKLOAD_KIND_CONTAINER", "WORKLOAD_KIND_COMPOSE", ...(i % 4 === 0 ? ["WORKLOAD_KIND_VM"] : [])],
    arch: "amd64",
    os: "linux",
    agentVersion: "0.1.0",
    agentEndpoint: `10.0.${Math.floor(i / 250)}.${i % 250}:7071`,
    replicaCount: 10,
    registeredAt: "2026-01-01T00:00:00Z",
    lastHeartbeatAt: new Date().toISOString(),
  };
}

const states = [
  "WORKLOAD_STATE_RUNNING",
  "WORKLOAD_STATE_PENDING",
  "WORKLOAD_STATE_DEGRADED",
  "WORKLOAD_STATE_STOPPED",
];

/** A recorded-shape workload in the BASIC view (replica statuses without diagnoses). */
function fakeWorkload(i: number, state = states[i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : i % 13 === 0 ? 3 : 0]!): Json {
  const replicas = 1 + (i % 3);
  return {
    id: `wl-${String(i).padStart(5, "0")}`,
    kind: i % 10 === 0 ? "WORKLOAD_KIND_COMPOSE" : "WORKLOAD_KIND_CONTAINER",
    replicas,
    resources: { cpuMillicores: 250, memoryMib: 256 },
    labels: { app: `app-${i % 50}`, team: `team-${i % 7}` },
    container: { image: "registry.local/app:1", ports: [{ containerPort: 8080 }] },
    status: {
      revision: `rev${i.toString(16)}`,
      generation: 1,
      observedGeneration: 1,
      state,
      readyReplicas: state === "WORKLOAD_STATE_RUNNING" ? replicas : 0,
      replicas: Array.from({ length: replicas }, (_, r) => ({
        index: r,
        name: `wl-${i}-${r}`,
        nodeId:
          state === "WORKLOAD_STATE_PENDING" ? undefined : `node-${String((i * 7 + r) % nodeCount).padStart(4, "0")}`,
        state: state === "WORKLOAD_STATE_RUNNING" ? "REPLICA_STATE_RUNNING" : "REPLICA_STATE_PENDING",
        ...(state === "WORKLOAD_STATE_PENDING"
          ? { reason: { code: "UNSCHEDULABLE", message: "0/1000 nodes are available: 1000 insufficient memory" } }
          : {}),
      })),
      createdAt: "2026-01-01T00:00:00Z",
    },
  };
}

/**
 * The fake API: the console's /v1 reads over the generated cluster, and SSE watches that stay open;
 * `pushWorkloads` sends MODIFIED events to every open workload watch.
 */
async function startRecordedShapeFakeApi() {
  const nodes = Array.from({ length: nodeCount }, (_, i) => fakeNode(i));
  const workloads = Array.from({ length: workloadCount }, (_, i) => fakeWorkload(i));
  let revision = 1000;
  const watchers = new Set<ServerResponse>();
  const app = Fastify();
  await app.register(registerUiRoutes);
  const page = (list: Json[], query: Json) => {
    const size = Math.min(1000, Number(query.pageSize) || 100);
    const start = Number(query.pageToken) || 0;
    const next = start + size < list.length ? String(start + size) : undefined;
    return { items: list.slice(start, start + size), next };
  };
  app.get("/v1/nodes", async (request) => {
    const { items, next } = page(nodes, request.query as Json);
    return { nodes: items, ...(next ? { nextPageToken: next } : {}) };
  });
  app.get("/v1/workloads", async (request) => {
    const { items, next } = page(workloads, request.query as Json);
    return { workloads: items, ...(next ? { nextPageToken: next } : {}), storeRevision: revision };
  });
  app.get("/v1/events", async () => ({
    events: Array.from({ length: 200 }, (_, i) => ({
      id: `e${String(i).padStart(6, "0")}`,
      time: new Date().toISOString(),
      severity: "EVENT_SEVERITY_INFO",
      type: "replica.running",
      workloadId: `wl-${String(i).padStart(5, "0")}`,
      nodeId: "node-0001",
      message: "replica is running",
    })),
  }));
  const sse = (reply: { hijack(): void; raw: ServerResponse }, keep?: Set<ServerResponse>) => {
    reply.hijack();
    reply.raw.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    reply.raw.write(": stream open\n\n");
    keep?.add(reply.raw);
    reply.raw.on("close", () => keep?.delete(reply.raw));
  };
  app.get("/v1/watch/workloads", async (_request, reply) => sse(reply, watchers));
  app.get("/v1/watch/events", async (_request, reply) => sse(reply));
  app.get("/v1/cluster/summary", async () => ({ summary: { nodesTotal: nodeCount, workloadsTotal: workloadCount } }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    url,
    /** Sends `count` MODIFIED events turning the first `count` workloads STOPPED. */
    pushWorkloads(count: number) {
      let chunk = "";
      for (let i = 0; i < count; i++) {
        revision++;
        const workload = fakeWorkload(i, "WORKLOAD_STATE_STOPPED");
        chunk += `id: ${revision}\ndata: ${JSON.stringify({ type: "WATCH_EVENT_TYPE_MODIFIED", workload, storeRevision: revision })}\n\n`;
      }
      for (const w of watchers) w.write(chunk);
    },
    expectedStopped(count: number) {
      let n = count;
      for (let i = count; i < workloadCount; i++) if (fakeWorkload(i).status.state === "WORKLOAD_STATE_STOPPED") n++;
      return n;
    },
    close: async () => {
      for (const w of watchers) w.end();
      await app.close();
    },
  };
}

const api = await startRecordedShapeFakeApi();
const browser = await chromium.launch({
  executablePath: process.env.PERSYS_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.addInitScript(() => {
    const w = window as unknown as { __longTasks: number[]; __longTaskLog: string[] };
    w.__longTasks = [];
    w.__longTaskLog = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        w.__longTasks.push(e.duration);
        w.__longTaskLog.push(`${Math.round(e.startTime)}+${Math.round(e.duration)}`);
      }
    }).observe({ type: "longtask" as "mark", buffered: true });
  });
  await page.goto(`${api.url}/ui/`);
  await page.waitForSelector("html[data-settled='true']", { timeout: 120_000 });
  await page.waitForFunction(
    (n) => document.querySelector("[data-testid='workloads-total']")?.textContent === String(n),
    workloadCount,
  );
  const marks = await page.evaluate(() => ({
    firstRenderMs: performance.getEntriesByName("persys:first-render")[0]?.startTime ?? -1,
    settledOverviewMs: performance.getEntriesByName("persys:overview-settled")[0]?.startTime ?? -1,
    longestTaskMs: Math.max(0, ...(window as unknown as { __longTasks: number[] }).__longTasks),
    domNodes: document.getElementsByTagName("*").length,
    longTasks: (window as unknown as { __longTaskLog: string[] }).__longTaskLog.join(" "),
    boot: performance.getEntriesByName("persys:boot")[0]?.startTime ?? -1,
  }));
  if (process.env.PERSYS_BENCH_DEBUG) console.error(marks);
  const shownNodes = await page.locator("[data-testid='nodes-total']").textContent();

  // live burst: watch events → counts on the overview
  const expected = api.expectedStopped(burstCount);
  const burstStart = Date.now();
  api.pushWorkloads(burstCount);
  await page.waitForFunction(
    (n) => document.querySelector("[data-testid='workloads-stopped']")?.textContent === String(n),
    expected,
    { timeout: 60_000 },
  );
  const burstApplyMs = Date.now() - burstStart;

  // scroll the node grid to the end
  const scrollFrameMs = await page.evaluate(async () => {
    const region = document.querySelector("section.card-rows");
    const start = performance.now();
    region.scrollTop = region.scrollHeight;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(undefined))));
    return performance.now() - start;
  });

  // the workloads list, then a filter
  let t = Date.now();
  await page.getByRole("link", { name: "Workloads" }).click();
  await page.waitForFunction((n) => document.body.textContent?.includes(`${n} of ${n} workloads`), workloadCount);
  const workloadsViewMs = Date.now() - t;
  t = Date.now();
  await page.getByLabel("Labels").fill("app=app-7");
  await page.waitForFunction((n) => document.body.textContent?.includes(`${n} of`), Math.ceil(workloadCount / 50));
  const filterMs = Date.now() - t;

  console.log(
    JSON.stringify(
      {
        bench: "ui-render",
        api: "recorded-shape fake API (in-process)",
        browser: await browser.version(),
        nodes: Number(shownNodes),
        workloads: workloadCount,
        firstRenderMs: Math.round(marks.firstRenderMs),
        settledOverviewMs: Math.round(marks.settledOverviewMs),
        longestTaskMs: Math.round(marks.longestTaskMs),
        burstEvents: burstCount,
        burstApplyMs,
        workloadsViewMs,
        filterMs,
        scrollFrameMs: Math.round(scrollFrameMs),
        domNodes: marks.domNodes,
      },
      null,
      2,
    ),
  );
} finally {
  await browser.close();
  await api.close();
}
