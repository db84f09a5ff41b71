/**
 * VM placement on a cluster whose only node runs VMs under TCG (KVM does not boot guests here, so
 * the node does not advertise `kvm`): a VM asking for more memory than any node has, and a VM
 * requiring KVM, stay pending with the scheduler's diagnosis saying why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../agent/support/agent-harness.js";
import { startVmHarness, type VmHarness } from "./support/vm-agent.js";

let h: VmHarness;
beforeAll(async () => {
  h = await startVmHarness({ "resources-allocatable-memory-mib": "2048" });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const vm = (id: string, memoryMib: number, accelerator: string) => ({
  id,
  kind: "WORKLOAD_KIND_VM",
  resources: { cpuMillicores: 500, memoryMib },
  vm: { vcpus: 1, memoryMib, imageName: "none", accelerator },
});

async function diagnosis(id: string): Promise<any> {
  return until(
    `${id} pending with a diagnosis`,
    async () => {
      const got = await h.rest("GET", `/v1/workloads/${id}/explain`);
      return got.body.replicas?.[0]?.diagnosis ? got.body.replicas[0] : undefined;
    },
    30_000,
  );
}

describe("VM placement", () => {
  it("keeps a VM asking for more memory than any node has pending, saying so", async () => {
    const id = `huge-${h.id}`;
    expect((await h.rest("PUT", `/v1/workloads/${id}`, vm(id, 65_536, "ACCELERATOR_TCG"))).status).toBe(201);
    const r = await diagnosis(id);
    expect(r.state).toBe("REPLICA_STATE_PENDING");
    expect(r.diagnosis.message).toBe(
      "0/1 nodes are available: 1 insufficient memory (need 65536 MiB, most free 2048 MiB).",
    );
  });

  it("keeps a VM requiring KVM pending on a cluster without kvm, saying so", async () => {
    const node = await until("node registered with its capabilities", async () => {
      const got = await h.rest("GET", `/v1/nodes/${h.agent.nodeId}`);
      return got.status === 200 ? got.body : undefined;
    });
    expect(JSON.stringify(node)).not.toContain('"kvm"');
    const id = `kvm-${h.id}`;
    expect((await h.rest("PUT", `/v1/workloads/${id}`, vm(id, 256, "ACCELERATOR_KVM"))).status).toBe(201);
    const r = await diagnosis(id);
    expect(r.state).toBe("REPLICA_STATE_PENDING");
    expect(r.diagnosis.message).toBe("0/1 nodes are available: 1 missing capability kvm.");
  });
});
