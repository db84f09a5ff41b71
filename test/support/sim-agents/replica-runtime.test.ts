// The simulated runtime and the request reader, without gRPC: restart policies, failure matching,
// deletion by id, and how Go and Persys requests are read.
import { agent, api } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { assignmentRequest } from "./apply-request.js";
import { type ParsedAssignment, parseAssignment } from "./assignment.js";
import { ReplicaRuntime, type RuntimeEvent } from "./replica-runtime.js";
import { waitUntil } from "./wait.js";
import { goFailureReason } from "./wire-reports.js";

const runtimes: ReplicaRuntime[] = [];
afterEach(() => {
  for (const r of runtimes.splice(0)) r.dispose();
});

function runtime(events: RuntimeEvent[] = []): ReplicaRuntime {
  const r = new ReplicaRuntime({ startDelayMs: 0, restartDelayMs: 20 }, (e) => events.push(e));
  runtimes.push(r);
  return r;
}

function parsed(input: Parameters<typeof assignmentRequest>[0]): ParsedAssignment {
  const p = parseAssignment(assignmentRequest(input));
  if ("invalid" in p) throw new Error(p.invalid);
  return p;
}

describe("crash and restart policy", () => {
  const cases: {
    name: string;
    mode?: api.RestartPolicyMode;
    maxRetries?: number;
    crashes: number;
    end: string;
    restarts: number;
  }[] = [
    { name: "unset reads as on-failure without limit", crashes: 3, end: "RUNNING", restarts: 3 },
    { name: "no", mode: api.RestartPolicyMode.RESTART_POLICY_MODE_NO, crashes: 1, end: "FAILED", restarts: 0 },
    { name: "always", mode: api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS, crashes: 2, end: "RUNNING", restarts: 2 },
    {
      name: "unless-stopped",
      mode: api.RestartPolicyMode.RESTART_POLICY_MODE_UNLESS_STOPPED,
      crashes: 1,
      end: "RUNNING",
      restarts: 1,
    },
    {
      name: "on-failure, 2 retries, 3 crashes",
      mode: api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE,
      maxRetries: 2,
      crashes: 3,
      end: "FAILED",
      restarts: 2,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const rt = runtime();
      rt.apply(parsed({ workloadId: "web", restartPolicy: c.mode, maxRetries: c.maxRetries }));
      for (let i = 0; i < c.crashes; i++) {
        await waitUntil(() => rt.get("web")?.state === "RUNNING", { message: `running before crash ${i + 1}` });
        const failed = rt.crash("web");
        expect(failed).toMatchObject({
          state: "FAILED",
          reason: { code: "CONTAINER_EXITED", message: "exited with code 137" },
        });
      }
      if (c.end === "RUNNING")
        await waitUntil(() => rt.get("web")?.restartCount === c.restarts, { message: "last restart" });
      else await new Promise((r) => setTimeout(r, 60));
      expect(rt.get("web")).toMatchObject({ state: c.end, restartCount: c.restarts });
      if (c.end === "FAILED") expect(rt.get("web")?.reason?.retryable).toBe(false);
    });
  }

  it("a VM crash is VM_CRASHED; crashing a replica that does not run throws", async () => {
    const rt = runtime();
    rt.apply(parsed({ workloadId: "vm1", kind: "vm" }));
    expect(() => rt.crash("vm1")).toThrow(/STARTING/);
    await waitUntil(() => rt.get("vm1")?.state === "RUNNING");
    expect(rt.crash("vm1").reason?.code).toBe("VM_CRASHED");
    expect(() => rt.crash("missing")).toThrow(/not on this node/);
  });
});

describe("failure matching", () => {
  it("matches by workload id, agent id or predicate, and `times` failures in a row", async () => {
    const rt = runtime();
    rt.failNextApply("a", { code: "IMAGE_NOT_FOUND" });
    rt.failNextApply("b-1", { code: "PORT_CONFLICT" });
    rt.failNextApply((x) => x.workloadId === "c", { code: "IMAGE_PULL_FAILED", times: 2 });
    for (const id of ["a", "c"]) rt.apply(parsed({ workloadId: id }));
    rt.apply(parsed({ workloadId: "b", index: 1 }));
    rt.apply(parsed({ workloadId: "b", index: 0 }));
    await waitUntil(() => rt.replicas().every((r) => r.state !== "STARTING"));
    expect(Object.fromEntries(rt.replicas().map((r) => [r.agentId, r.reason?.code ?? r.state]))).toEqual({
      "a-0": "IMAGE_NOT_FOUND",
      "c-0": "IMAGE_PULL_FAILED",
      "b-1": "PORT_CONFLICT",
      "b-0": "RUNNING",
    });
    rt.apply(parsed({ workloadId: "c" }));
    await waitUntil(() => rt.get("c")?.state !== "STARTING");
    expect(rt.get("c")?.state).toBe("FAILED");
    rt.apply(parsed({ workloadId: "c" }));
    await waitUntil(() => rt.get("c")?.state === "RUNNING", { message: "third apply runs" });
  });
});

describe("delete", () => {
  it("removes by agent id, else every replica of the workload, and reports each removal", () => {
    const events: RuntimeEvent[] = [];
    const rt = runtime(events);
    for (const index of [0, 1, 2]) rt.apply(parsed({ workloadId: "w", index, generation: index + 1 }));
    expect(rt.delete("w-1").map((d) => d.index)).toEqual([1]);
    expect(rt.delete("w").map((d) => [d.index, d.generation])).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(rt.delete("w")).toEqual([]);
    expect(events.filter((e) => e.type === "deleted")).toHaveLength(3);
  });
});

describe("parseAssignment", () => {
  const cases: {
    name: string;
    req: Partial<agent.ApplyWorkloadRequest>;
    expected: Partial<ParsedAssignment> | string;
  }[] = [
    {
      name: "Persys extension: identity, generation, reservation, ports",
      req: assignmentRequest({
        workloadId: "web",
        index: 2,
        generation: 9,
        revision: "r9",
        resources: { cpuMillicores: 250, memoryMiB: 512, diskGiB: 1 },
        ports: [{ hostPort: 5353, containerPort: 53, protocol: "udp" }],
      }),
      expected: {
        agentId: "web-2",
        workloadId: "web",
        index: 2,
        generation: 9,
        revision: "r9",
        desired: "running",
        kind: "container",
        resources: { cpuMillicores: 250, memoryMiB: 512, diskGiB: 1 },
        ports: [{ hostPort: 5353, containerPort: 53, protocol: "udp" }],
        restart: { policy: "on-failure", maxRetries: 0 },
        extension: true,
      },
    },
    {
      name: "Persys extension: request desired state wins",
      req: { ...assignmentRequest({ workloadId: "web" }), desiredState: agent.DesiredState.DESIRED_STATE_STOPPED },
      expected: { desired: "stopped" },
    },
    {
      name: "Go VM spec: vcpus, memory and disk sizes",
      req: {
        id: "vm-a",
        type: agent.WorkloadType.WORKLOAD_TYPE_VM,
        revisionId: "g1",
        spec: {
          spec: {
            $case: "vm",
            value: agent.VMSpec.fromPartial({ vcpus: 2, memoryMb: 2048, disks: [{ sizeGb: 20 }, { sizeGb: 5 }] }),
          },
        },
      },
      expected: {
        agentId: "vm-a",
        index: 0,
        generation: 0,
        kind: "vm",
        desired: "running",
        resources: { cpuMillicores: 2000, memoryMiB: 2048, diskGiB: 25 },
        extension: false,
      },
    },
    {
      name: "Go container: restart policy on-failure with retries",
      req: {
        id: "c",
        spec: {
          spec: {
            $case: "container",
            value: agent.ContainerSpec.fromPartial({ restartPolicy: { policy: "on-failure", maxRetryCount: 4 } }),
          },
        },
      },
      expected: { kind: "container", restart: { policy: "on-failure", maxRetries: 4 }, hasSpec: true },
    },
    {
      name: "Go desired-state change only (no spec)",
      req: { id: "c", desiredState: agent.DesiredState.DESIRED_STATE_STOPPED },
      expected: { hasSpec: false, desired: "stopped" },
    },
    { name: "no id", req: {}, expected: "invalid request: id is required" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = parseAssignment(agent.ApplyWorkloadRequest.fromPartial(c.req));
      if (typeof c.expected === "string") expect(result).toEqual({ invalid: c.expected });
      else expect(result).toMatchObject(c.expected);
    });
  }
});

describe("Go failure reasons", () => {
  it.each([
    ["IMAGE_NOT_FOUND", 2],
    ["IMAGE_PULL_FAILED", 1],
    ["VM_BOOT_FAILED", 8],
    ["PORT_CONFLICT", 5],
    ["CONTAINER_EXITED", 5],
  ] as const)("%s → FailureReason %i", (code, value) => {
    expect(goFailureReason(code)).toBe(value);
  });
});
