/**
 * The agent's side of `persys.control.v1.AgentControl` against a fake control plane that answers as
 * the Go scheduler does: what a registration and a heartbeat carry (Go fields and the Persys
 * extensions), the interval, re-registration on NOT_FOUND and on an expired lease, failover to the
 * next endpoint, and debounced extra reports. The fake serves no heartbeat stream (as the Go
 * scheduler), so every heartbeat here also takes the fallback to the unary call.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { loadAgentConfig, NodeAgent } from "@persys/agent";
import { api, control } from "@persys/schema";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ControlSession } from "../../agent/src/control/control-session.js";
import { freePort } from "../support/free-port.js";
import { runDir } from "../support/services.js";
import { FakeAgentControl, type FakeAgentControlOptions } from "../support/sim-agents/index.js";
import { until } from "./support/agent-harness.js";
import { requireDocker } from "./support/docker-fixtures.js";

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function fake(options: FakeAgentControlOptions = {}) {
  const f = await FakeAgentControl.start(options);
  closers.push(() => f.close());
  return f;
}

function session(
  endpoints: string[],
  nodeId: string,
  extra: Partial<ConstructorParameters<typeof ControlSession>[0]> = {},
) {
  const s = new ControlSession({
    endpoints,
    callTimeoutMs: 2_000,
    reportDebounceMs: 20,
    registerRequest: () =>
      control.RegisterNodeRequest.fromPartial({ nodeId, grpcEndpoint: "127.0.0.1:1", timestamp: new Date() }),
    heartbeatRequest: () => control.HeartbeatRequest.fromPartial({ nodeId, timestamp: new Date() }),
    ...extra,
  });
  closers.push(() => s.stop());
  return s;
}

describe("the agent's control session", () => {
  it("registers, heartbeats at once and then at the interval the control plane gives", async () => {
    const cp = await fake({ heartbeatIntervalSeconds: 1 });
    const s = session([cp.address], "n1");
    s.start();
    await until("registered and a first heartbeat", () => cp.nodes.get("n1")?.heartbeats === 1);
    expect(s.intervalMs).toBe(1_000);
    const at = Date.now();
    await until("two more heartbeats", () => (cp.nodes.get("n1")?.heartbeats ?? 0) >= 3, 5_000);
    expect(Date.now() - at).toBeGreaterThanOrEqual(1_500);
  });

  it("registers again when a heartbeat answers NOT_FOUND (the control plane forgot the node)", async () => {
    const cp = await fake({ heartbeatIntervalSeconds: 1 });
    const s = session([cp.address], "n2", { intervalMs: 200 });
    s.start();
    await until("registered", () => cp.nodes.get("n2")?.heartbeats);
    cp.forget("n2");
    await until("registered again", () => cp.registrationsOf("n2").length === 2, 5_000);
    await until("heartbeating again", () => (cp.nodes.get("n2")?.heartbeats ?? 0) >= 1, 5_000);
  });

  it("registers again when the lease expired before the next heartbeat", async () => {
    const cp = await fake({ heartbeatIntervalSeconds: 1 });
    cp.leaseMs = 300;
    const s = session([cp.address], "n3", { intervalMs: 700 });
    s.start();
    await until("registered", () => cp.nodes.get("n3")?.heartbeats === 1);
    await until("re-registered after the lease ran out", () => cp.registrationsOf("n3").length >= 2, 5_000);
    expect(cp.heartbeatsOf("n3").length).toBeLessThan(cp.registrationsOf("n3").length + 1);
  });

  it("moves to the next endpoint when one does not answer", async () => {
    const cp = await fake({ heartbeatIntervalSeconds: 1 });
    const dead = `127.0.0.1:${await freePort()}`;
    const s = session([dead, cp.address], "n4");
    s.start();
    await until("registered with the second endpoint", () => cp.nodes.get("n4")?.heartbeats, 10_000);
    expect(s.endpoint).toBe(cp.address);
  });

  it("coalesces a burst of reports into one extra heartbeat", async () => {
    const cp = await fake({ heartbeatIntervalSeconds: 60 });
    const s = session([cp.address], "n5");
    s.start();
    await until("first heartbeat", () => cp.nodes.get("n5")?.heartbeats === 1);
    for (let i = 0; i < 10; i++) s.report();
    await until("one report", () => cp.nodes.get("n5")?.heartbeats === 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(cp.nodes.get("n5")?.heartbeats).toBe(2);
  });
});

describe("what a real agent sends", () => {
  it("registers with the Go fields and persys_node, and heartbeats with Go statuses and persys_replicas", async () => {
    await requireDocker();
    const cp = await fake({ heartbeatIntervalSeconds: 1 });
    const agent = await NodeAgent.start(
      loadAgentConfig({
        flags: {
          "node-id": "wire-node",
          "node-labels": "zone=a",
          "control-plane-endpoints": cp.address,
          "listen-grpc": "127.0.0.1:0",
          "listen-metrics": "127.0.0.1:0",
          "state-dir": mkdtempSync(join(runDir(), "agent-wire-")),
          "resources-capacity-cpu-millicores": "4000",
          "resources-reserve-cpu-millicores": "500",
          insecure: "true",
        },
      }),
      { logger: pino({ level: "silent" }) },
    );
    closers.push(() => agent.close());
    const registration = await until("registered", () => cp.registrationsOf("wire-node")[0]);
    expect(registration).toMatchObject({
      nodeId: "wire-node",
      grpcEndpoint: agent.endpoint,
      agentVersion: "persys-agent/0.1.0",
      labels: { zone: "a", os: "linux" },
      capabilities: {
        cpuTotalMillicores: 4000,
        supportedWorkloadTypes: ["container", "compose"],
        supportedStorageDrivers: ["local"],
        storagePools: [{ name: "root", type: "dir" }],
      },
      persysNode: {
        capabilities: ["docker", "compose"],
        supportedKinds: [api.WorkloadKind.WORKLOAD_KIND_CONTAINER, api.WorkloadKind.WORKLOAD_KIND_COMPOSE],
        os: "linux",
        capacity: { cpuMillicores: 4000 },
        allocatable: { cpuMillicores: 3500 },
        conditions: [
          { type: "RuntimeReady", status: api.ConditionStatus.CONDITION_STATUS_TRUE, reason: "DockerReady" },
        ],
      },
    });
    expect(registration.capabilities!.memoryTotalMb).toBeGreaterThan(0);
    expect(registration.persysNode!.allocatable!.memoryMib).toBe(registration.persysNode!.capacity!.memoryMib - 256);

    const beat = await until("a heartbeat", () => cp.lastHeartbeat("wire-node"));
    expect(beat.usage!.memoryUsedMb).toBeGreaterThan(0);
    expect(beat.persysNode).toMatchObject({
      conditions: [{ type: "RuntimeReady" }],
      usage: { memoryMib: beat.usage!.memoryUsedMb },
    });
    expect(beat.workloadStatuses).toEqual([]);
    expect(beat.persysReplicas).toEqual([]);
  });
});
