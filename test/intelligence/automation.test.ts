/**
 * Automation on a real control plane (real etcd and Redis, simulated agents): an autoscale policy
 * scales 2 → 4 when the CPU series crosses its threshold and not again during its cooldown; the
 * replicas it adds are placed (and explained) by the scheduler like any other; a dry-run policy
 * writes only audit records; a manual policy waits for approval.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { api, PersysClient } from "@persys/sdk";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, runServer } from "../../controlplane/src/cli/run-server.js";
import { container, type Harness, startHarness, testConfig, until } from "../controlplane/control-plane-harness.js";
import { scratchDir } from "../sdk/sdk-cluster.js";
import { persysctlInProcess } from "./cli-io.js";

let h: Harness;
let client: PersysClient;
const ACTED = api.AuditOutcome.AUDIT_OUTCOME_ACTED;

const running = async (id: string) => {
  const w = (await h.rest("GET", `/v1/workloads/${id}`)).body.workload;
  return (w?.status?.replicas ?? []).filter((r: any) => r.state === "REPLICA_STATE_RUNNING").length;
};

beforeAll(async () => {
  h = await startHarness(
    testConfig({ "intelligence-sample-interval-ms": "200", "automation-evaluate-interval-ms": "250" }),
  );
  await h.addNode({ id: "n1" }, { usageFactor: 0.3 });
  await h.addNode({ id: "n2" }, { usageFactor: 0.3 });
  client = new PersysClient({ endpoint: h.server.grpcAddress });
}, 60_000);

afterAll(async () => {
  client?.close();
  await h?.close();
});

describe("autoscale policy", () => {
  it("scales web 2 → 4 once the cpu series crosses 80 %, then holds during the cooldown", async () => {
    await h.rest(
      "PUT",
      "/v1/workloads/web",
      container("web", { replicas: 2, resources: { cpuMillicores: 200, memoryMib: 128 } }),
    );
    await until("web running", async () => (await running("web")) === 2);
    const applied = await client.automation.apply({
      id: "web-autoscale",
      when: { metric: { workloadId: "web", metric: "cpu", threshold: 80, windowSeconds: 2 } },
      action: { scale: { workloadId: "web", step: 2, minReplicas: 2, maxReplicas: 8 } },
      cooldownSeconds: 30,
    });
    expect(applied.created).toBe(true);
    // 30 % of the request is used: the policy evaluates and does nothing.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await h.rest("GET", "/v1/workloads/web")).body.workload.replicas).toBe(2);
    expect((await client.automation.audit({ policyId: "web-autoscale" })).filter((r) => r.outcome === ACTED)).toEqual(
      [],
    );

    const crossedAt = Date.now();
    for (const node of h.nodes) node.setUsageFactor(0.95);
    await until(
      "web scaled to 4",
      async () => (await h.rest("GET", "/v1/workloads/web")).body.workload.replicas === 4,
      15_000,
    );
    console.log(`scaled ${Date.now() - crossedAt} ms after the cpu use rose to 95 %`);
    await until("4 replicas running", async () => (await running("web")) === 4);
    // Still at 95 % with 4 replicas, but cooling down: no further scaling for the rest of the test.
    await new Promise((r) => setTimeout(r, 3000));
    const w = (await h.rest("GET", "/v1/workloads/web")).body.workload;
    expect(w.replicas).toBe(4);

    const records = await client.automation.audit({ policyId: "web-autoscale" });
    const acted = records.filter((r) => r.outcome === ACTED);
    expect(acted.map((r) => r.action)).toEqual(["scale web 2 → 4"]);
    expect(acted[0]!.observed).toMatch(/^cpu of web \d+\.\d % > 80 % over 2 s/);
    expect(acted[0]!.evidence.map((e) => e.ref)).toEqual(["usage:replica:web:0:cpu", "usage:replica:web:1:cpu"]);
    const cooling = records.filter(
      (r) => r.outcome === api.AuditOutcome.AUDIT_OUTCOME_COOLDOWN && r.time! > acted[0]!.time!,
    );
    expect(cooling.length).toBeGreaterThanOrEqual(5);
    expect(cooling[0]!.message).toMatch(/cooling down for \d+ s more/);
    // The change went through the public API: an ordinary apply event, and the scheduler's diagnoses.
    const events = (await h.rest("GET", "/v1/workloads/web/events?types=WorkloadApplied")).body.events;
    expect(events.length).toBe(2);
    for (const index of [2, 3]) {
      const replica = w.status.replicas.find((r: any) => r.index === index);
      expect(replica.placement.winnerNodeId).toBe(replica.nodeId);
      expect(replica.placement.nodesEvaluated).toBe(2);
      expect(replica.placement.message).toMatch(/^placed on n[12]/);
    }
  });
});

describe("dry-run policy", () => {
  it("writes only audit records: no change to the workload", async () => {
    await h.rest(
      "PUT",
      "/v1/workloads/batch",
      container("batch", { replicas: 1, resources: { cpuMillicores: 100, memoryMib: 64 } }),
    );
    await until("batch running", async () => (await running("batch")) === 1);
    const before = (await h.rest("GET", "/v1/workloads/batch")).body.workload;
    const policy = await h.rest("PUT", "/v1/policies/batch-dry", {
      id: "batch-dry",
      when: { metric: { workloadId: "batch", metric: "POLICY_METRIC_CPU_PERCENT", threshold: 10, windowSeconds: 2 } },
      action: { scale: { workloadId: "batch", step: 3, minReplicas: 1, maxReplicas: 5 } },
      cooldownSeconds: 1,
      dryRun: true,
    });
    expect(policy.status).toBe(200);
    const dry = await until("two dry runs recorded", async () => {
      const list = (await h.rest("GET", "/v1/audit?policyId=batch-dry")).body.records ?? [];
      const runs = list.filter((r: any) => r.outcome === "AUDIT_OUTCOME_DRY_RUN");
      return runs.length >= 2 && runs;
    });
    expect(dry[0].action).toBe("scale batch 1 → 4");
    expect(dry[0].message).toBe("dry run: nothing changed");
    const after = (await h.rest("GET", "/v1/workloads/batch")).body.workload;
    expect(after.replicas).toBe(1);
    expect(after.status.generation).toBe(before.status.generation);
    expect(after.status.revision).toBe(before.status.revision);
    const applied = (await h.rest("GET", "/v1/workloads/batch/events?types=WorkloadApplied")).body.events;
    expect(applied.length).toBe(1);
    await client.automation.delete("batch-dry");
  });
});

describe("manual approval", () => {
  it("records the action as awaiting approval and runs it when approved (persysctl)", async () => {
    // A policy file as an operator writes it (`then:` is the document alias of the wire field `action`).
    const file = join(scratchDir("policy-"), "cordon-hot.yaml");
    writeFileSync(
      file,
      [
        "id: cordon-hot",
        "when:",
        "  metric: { nodeId: n1, metric: cpu, threshold: 1, windowSeconds: 2 }",
        "then:",
        "  cordon: {}",
        "approval: manual",
        "cooldownSeconds: 600",
        "",
      ].join("\n"),
    );
    const applied = await persysctlInProcess(["--endpoint", h.server.grpcAddress, "policy", "apply", "-f", file]);
    expect(applied.out).toBe("policy/cordon-hot created\n");
    const awaiting = await until("an approval is requested", async () => {
      const list = await client.automation.audit({ awaitingApproval: true });
      return list.find((r) => r.policyId === "cordon-hot");
    }).then((record) => record!);
    expect(awaiting.action).toBe("cordon n1");
    expect((await h.rest("GET", "/v1/nodes/n1")).body.node.cordoned).toBeUndefined();
    const approved = await persysctlInProcess([
      "--endpoint",
      h.server.grpcAddress,
      "policy",
      "approve",
      awaiting.approvalId,
    ]);
    expect(approved.out).toMatch(/^acted: cordon n1 — approved by \S+: n1 cordoned\n$/);
    expect((await h.rest("GET", "/v1/nodes/n1")).body.node.cordoned).toBe(true);
    expect(await client.automation.audit({ awaitingApproval: true })).toEqual([]);
    const again = await persysctlInProcess([
      "--endpoint",
      h.server.grpcAddress,
      "policy",
      "approve",
      awaiting.approvalId,
    ]);
    expect(again.code).not.toBe(0);
    expect(again.err).toMatch(/already decided \(CONFLICT\)/);
  });

  it("rejects a policy with bad fields, naming each", async () => {
    const res = await h.rest("PUT", "/v1/policies/Bad_Name", { when: {}, action: { scale: { maxReplicas: 0 } } });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: any) => d.path)).toEqual([
      "policy.id",
      "policy.when",
      "policy.action.scale.workloadId",
      "policy.action.scale.maxReplicas",
    ]);
  });
});

describe("event trigger and webhook, evaluated by the leader only", () => {
  it("posts to a webhook once a replica fails; a second server on the same cluster never evaluates", async () => {
    // A second control plane on the same etcd prefix and Redis: it serves the API but does not lead.
    const follower: RunningServer = await runServer(
      { ...h.config, id: "follower" },
      { logger: pino({ level: "silent" }) },
    );
    const received: unknown[] = [];
    const hook = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        received.push(JSON.parse(body));
        res.end("ok");
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    try {
      expect(follower.controlPlane.isLeader).toBe(false);
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
      for (const node of h.nodes)
        node.failNextApply("bad", { code: "IMAGE_NOT_FOUND", message: "no such image bad:1" });
      // Applied through the follower: every server serves the automation API.
      const followerClient = new PersysClient({ endpoint: follower.grpcAddress });
      await followerClient.automation.apply({
        id: "page-on-failure",
        when: {
          event: {
            type: "ReplicaFailed",
            messagePattern: "IMAGE_NOT_FOUND|no such image",
            workloadId: "bad",
            windowSeconds: 60,
          },
        },
        action: { webhook: { url } },
        cooldownSeconds: 600,
      });
      followerClient.close();
      await h.rest("PUT", "/v1/workloads/bad", container("bad", { resources: { cpuMillicores: 50, memoryMib: 32 } }));
      await until("the webhook was called", () => received.length > 0, 20_000);
      expect(received[0]).toMatchObject({
        policy: "page-on-failure",
        observed: expect.stringMatching(/^1 ReplicaFailed event\(s\) in 60 s/),
      });
      // The audit record is written once the webhook's answer is read, so just after the receiver saw the call.
      const acted = await until("the acted record is in the audit trail", async () => {
        const records = await client.automation.audit({ policyId: "page-on-failure" });
        return records.find((r) => r.outcome === ACTED);
      }).then((record) => record!);
      expect(acted.action).toBe(`POST ${url}`);
      expect(acted.message).toBe("webhook answered HTTP 200");
      expect(acted.evidence[0]?.type).toBe("ReplicaFailed");
      // Every record of every policy so far was written by the leader.
      const all = await client.automation.audit({ limit: 1000 });
      expect(new Set(all.map((r) => r.evaluatedBy))).toEqual(new Set([h.server.controlPlane.id]));
    } finally {
      hook.close();
      await follower.close();
    }
  });
});

describe("webhook retries", () => {
  it("retries a 5xx with backoff until the receiver answers 2xx, each attempt in the audit trail; a 4xx is final", async () => {
    const answers: Record<string, number[]> = { "/flaky": [503, 502, 200], "/gone": [404] };
    const hits: Record<string, number> = {};
    const hook = createServer((req, res) => {
      const path = req.url ?? "";
      hits[path] = (hits[path] ?? 0) + 1;
      const n = hits[path];
      const list = answers[path] ?? [500];
      req.resume();
      res.statusCode = list[Math.min(n - 1, list.length - 1)]!;
      res.end();
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
    try {
      for (const [id, path] of [
        ["hook-flaky", "/flaky"],
        ["hook-gone", "/gone"],
      ] as const) {
        await client.automation.apply({
          id,
          when: { cron: "* * * * *" },
          action: { webhook: { url: `${base}${path}`, maxAttempts: 4, timeoutSeconds: 2 } },
          cooldownSeconds: 600,
        });
      }
      const O = api.AuditOutcome;
      const attempts = new Set([O.AUDIT_OUTCOME_RETRYING, O.AUDIT_OUTCOME_ACTED, O.AUDIT_OUTCOME_FAILED]);
      const final = (policyId: string) =>
        until(`${policyId} finished`, async () => {
          const records = (await client.automation.audit({ policyId })).filter((r) => attempts.has(r.outcome));
          return records.some((r) => r.outcome !== O.AUDIT_OUTCOME_RETRYING) ? records : undefined;
        }).then((records) => records!);
      const flaky = (await final("hook-flaky")).reverse();
      expect(flaky.map((r) => api.auditOutcomeToJSON(r.outcome))).toEqual([
        "AUDIT_OUTCOME_RETRYING",
        "AUDIT_OUTCOME_RETRYING",
        "AUDIT_OUTCOME_ACTED",
      ]);
      expect(flaky[0]!.message).toMatch(/^attempt 1 of 4 failed: HTTP 503; next in \d+ ms$/);
      expect(flaky[1]!.message).toMatch(/^attempt 2 of 4 failed: HTTP 502; next in \d+ ms$/);
      expect(flaky[2]!.message).toBe("webhook answered HTTP 200 on attempt 3 of 4");
      // Exponential backoff with jitter: the second wait is at least the first's floor doubled.
      const waits = flaky.slice(0, 2).map((r) => Number(/next in (\d+) ms/.exec(r.message)![1]));
      expect(waits[0]).toBeGreaterThanOrEqual(250);
      expect(waits[1]).toBeGreaterThanOrEqual(500);
      expect(flaky[2]!.time!.getTime() - flaky[0]!.time!.getTime()).toBeGreaterThanOrEqual(waits[0]! + waits[1]! - 50);
      expect(hits["/flaky"]).toBe(3);

      const gone = await final("hook-gone");
      expect(gone.map((r) => api.auditOutcomeToJSON(r.outcome))).toEqual(["AUDIT_OUTCOME_FAILED"]);
      expect(gone[0]!.message).toMatch(/answered HTTP 404 \(not retried\)$/);
      expect(hits["/gone"]).toBe(1);
    } finally {
      hook.close();
      await client.automation.delete("hook-flaky");
      await client.automation.delete("hook-gone");
    }
  });
});
