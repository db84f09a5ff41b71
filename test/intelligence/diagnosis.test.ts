/**
 * Diagnoses on live data: a workload whose replica loses its node and cannot be re-placed. The
 * diagnosis must cite the NodeLost event that caused it (by id), the pending diagnosis, and what
 * would fit the replica; `ask`, the SDK and persysctl answer from the same findings.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { PersysClient } from "@persys/sdk";
import nock from "nock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntelligenceService } from "../../controlplane/src/intelligence/index.js";
import { container, type Harness, startHarness, until } from "../controlplane/control-plane-harness.js";
import { persysctlInProcess } from "./cli-io.js";

let h: Harness;
let client: PersysClient;
let lostNode: string;
let survivor: string;
let lostEventId: string;

beforeAll(async () => {
  h = await startHarness();
  await h.addNode({ id: "n1" });
  await h.addNode({ id: "n2" });
  // Two replicas of 1536 MiB on nodes of 2048 MiB: one per node, and never two on one node.
  const put = await h.rest(
    "PUT",
    "/v1/workloads/web",
    container("web", { replicas: 2, resources: { cpuMillicores: 250, memoryMib: 1536 } }),
  );
  expect(put.status).toBeLessThan(300);
  const placed = await until("both replicas running", async () => {
    const w = (await h.rest("GET", "/v1/workloads/web")).body.workload;
    const replicas = w?.status?.replicas ?? [];
    return replicas.length === 2 && replicas.every((r: any) => r.state === "REPLICA_STATE_RUNNING") && replicas;
  });
  lostNode = placed.find((r: any) => r.index === 1).nodeId;
  survivor = lostNode === "n1" ? "n2" : "n1";
  await h.nodes.find((n) => n.id === lostNode)!.stop();
  await until(
    "replica 1 pending after its node is lost",
    async () => {
      const w = (await h.rest("GET", "/v1/workloads/web")).body.workload;
      return w.status.replicas.find((r: any) => r.index === 1)?.state === "REPLICA_STATE_PENDING";
    },
    30_000,
  );
  const events = await h.rest("GET", `/v1/events?types=NodeLost&nodeId=${lostNode}`);
  lostEventId = events.body.events.at(-1).id;
  client = new PersysClient({ endpoint: h.server.grpcAddress });
}, 90_000);

afterAll(async () => {
  client?.close();
  await h?.close();
});

describe("diagnose a workload whose node was lost", () => {
  it("cites the NodeLost event by id as the root of the pending replica", async () => {
    const res = await h.rest("GET", "/v1/workloads/web/diagnosis");
    expect(res.status).toBe(200);
    const d = res.body.diagnosis;
    const rules = d.causes.map((c: any) => c.rule);
    expect(rules).toEqual(["replica-unschedulable", "node-lost"]);
    const [pending, lost] = d.causes;
    expect(pending.replicaIndex).toBe(1);
    expect(pending.summary).toMatch(/replica 1 pending since .*: 0\/2 nodes are available/);
    expect(pending.evidence[0]).toMatchObject({ kind: "EVIDENCE_KIND_DIAGNOSIS", ref: "pending/web/1" });
    // n1 or n2 keeps replica 0 (1536 of 2048 MiB): 512 MiB free, 1536 needed.
    expect(pending.remediation).toContain(
      `freeing 1024 MiB of memory (512 free, needs 1536) on ${survivor} would fit it`,
    );
    expect(lost.code).toBe("NODE_LOST");
    expect(lost.summary).toMatch(new RegExp(`node ${lostNode} was lost at .*replica 1 was removed from it`));
    const refs = lost.evidence.map((e: any) => e.ref);
    expect(refs[0]).toBe(lostEventId);
    expect(lost.evidence.map((e: any) => e.type)).toEqual(
      expect.arrayContaining(["NodeLost", "ReplicaMoved", "NodeNotReady", "NodeState"]),
    );
    expect(d.summary).toContain(`because node ${lostNode} was lost`);
    // Ranked retrieval: the node-loss event is among the most relevant events, and NODE_LOST's remediation is offered.
    expect(d.relatedEvents.slice(0, 5).map((e: any) => e.ref)).toContain(lostEventId);
    expect(d.remediations.map((r: any) => r.code)).toEqual(expect.arrayContaining(["UNSCHEDULABLE", "NODE_LOST"]));
  });

  it("answers NOT_FOUND for an unknown workload", async () => {
    const res = await h.rest("GET", "/v1/workloads/nope/diagnosis");
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("NOT_FOUND");
  });

  it("answers 'why is web pending?' from the same findings, without a model (SDK)", async () => {
    const answer = await client.intelligence.ask("why is web pending?");
    expect(answer.intent).toBe("diagnose");
    expect(answer.wordedBy).toBe("");
    expect(answer.answer).toContain(lostEventId);
    expect(answer.answer).toContain(`node ${lostNode} was lost`);
    expect(answer.evidence.map((e) => e.ref)).toContain(lostEventId);
  });

  it("lets a model word the answer from the findings only (mock OpenAI-compatible endpoint, recorded response envelope)", async () => {
    const recorded = JSON.parse(
      readFileSync(
        resolve(import.meta.dirname, "../../controlplane/src/intelligence/testdata/chat-completion-web-pending.json"),
        "utf8",
      ),
    );
    const cp = h.server.controlPlane;
    const sources = { state: cp.state, nodes: cp.nodes, workloads: cp.workloads, events: cp.eventStore, now: Date.now };
    const withModel = new IntelligenceService(sources, { url: "https://llm.example.test/v1", model: "gpt-4o-mini" });
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1/);
    try {
      // The mock model rewords the draft it is sent, keeping its event id and node names.
      let draft = "";
      nock("https://llm.example.test")
        .post("/v1/chat/completions")
        .reply(200, (_uri, body: any) => {
          draft = /Draft answer: (.*)\n\nFindings:/s.exec(body.messages[1].content)![1]!;
          const reply = structuredClone(recorded);
          reply.choices[0].message.content = `In short: ${draft}`;
          return reply;
        });
      const worded = await withModel.ask({ question: "why is web pending?" });
      expect(worded.wordedBy).toBe("gpt-4o-mini-2024-07-18");
      expect(worded.answer).toBe(`In short: ${draft}`);
      expect(draft).toContain(lostEventId);
      // A model that cites an event the findings do not hold is ignored: the rules' answer stands.
      nock("https://llm.example.test")
        .post("/v1/chat/completions")
        .reply(200, () => {
          const reply = structuredClone(recorded);
          reply.choices[0].message.content = `web waits for ${survivor} (event 1764624161000-0).`;
          return reply;
        });
      const kept = await withModel.ask({ question: "why is web pending?" });
      expect(kept.wordedBy).toBe("");
      expect(kept.answer).toContain(lostEventId);
      expect(kept.diagnosis?.causes.map((c) => c.rule)).toEqual(["replica-unschedulable", "node-lost"]);
    } finally {
      nock.cleanAll();
      nock.enableNetConnect();
    }
  });

  it("persysctl diagnose web prints the chain with the event id; -o json is the same diagnosis", async () => {
    const table = await persysctlInProcess(["--endpoint", h.server.grpcAddress, "diagnose", "web"]);
    expect(table.code).toBe(0);
    expect(table.out).toContain("[node-lost]");
    expect(table.out).toContain(`event ${lostEventId}`);
    const json = await persysctlInProcess(["--endpoint", h.server.grpcAddress, "diagnose", "web", "-o", "json"]);
    expect(JSON.parse(json.out).causes.map((c: any) => c.rule)).toEqual(["replica-unschedulable", "node-lost"]);
    const ask = await persysctlInProcess(["--endpoint", h.server.grpcAddress, "ask", "why", "is", "web", "pending?"]);
    expect(ask.out).toContain(lostEventId);
    const forecast = await persysctlInProcess(["--endpoint", h.server.grpcAddress, "forecast", "-o", "yaml"]);
    expect(forecast.code).toBe(0);
    expect(forecast.out).toContain("signal: FORECAST_SIGNAL_RESERVATION");
  });
});
