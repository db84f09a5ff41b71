/**
 * Operator actions and Go compatibility against the real control plane: drain moves replicas off a
 * node; the Go gateway's REST routes and the Go persysctl's gRPC AgentControl calls drive the same
 * workloads.
 */
import { credentials } from "@grpc/grpc-js";
import { control } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { container, type Harness, startHarness, until } from "./control-plane-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("operations", () => {
  it("drains a node: it is cordoned and its replicas move to other nodes", async () => {
    h = await startHarness();
    const [n1, n2] = [await h.addNode({ id: "n1" }), await h.addNode({ id: "n2" })];
    await h.rest("PUT", "/v1/workloads/web", container("web", { replicas: 2 }));
    await until("one replica on each node", async () => n1.replicas().length === 1 && n2.replicas().length === 1);
    const n3 = await h.addNode({ id: "n3" });
    const drained = await h.rest("POST", "/v1/nodes/n1/drain", { reason: "maintenance" });
    expect(drained.status).toBe(200);
    expect(drained.body.evicted).toEqual([expect.objectContaining({ workloadId: "web" })]);
    await until(
      "n1 empty and the replica running on n3",
      async () => n1.replicas().length === 0 && n3.replica("web")?.state === "RUNNING",
    );
    const node = (await h.rest("GET", "/v1/nodes/n1")).body.node;
    expect([node.cordoned, node.draining]).toEqual([true, true]);
    const plan = await h.rest("POST", "/v1/plan", { workload: container("more", { replicas: 3 }) });
    expect(plan.body.replicas.every((r: any) => r.nodeId !== "n1")).toBe(true);
    await h.rest("POST", "/v1/nodes/n1/uncordon", {});
    expect((await h.rest("GET", "/v1/nodes/n1")).body.node.cordoned ?? false).toBe(false);
  });

  it("serves the Go gateway's REST routes on the same handlers", async () => {
    h = await startHarness();
    const node = await h.addNode({ id: "n1" });
    const scheduled = await h.rest("POST", "/workloads/schedule", {
      workload_id: "legacy",
      revision_id: "rev-1",
      desired_state: "running",
      spec: {
        type: "container",
        resources: { cpu_millicores: "100", memory_mb: "64" },
        container: { image: "persys-test/web:1" },
      },
    });
    expect(scheduled).toMatchObject({ status: 200, body: { success: true } });
    await until("running", async () => node.replica("legacy")?.state === "RUNNING");
    const listed = await until("listed as Running", async () => {
      const list = await h!.rest("GET", "/workloads?node_id=n1");
      return list.body.workloads?.[0]?.status === "Running" ? list.body.workloads[0] : undefined;
    });
    expect(listed).toMatchObject({ workload_id: "legacy", type: "container", assigned_node_id: "n1" });
    expect((await h.rest("GET", "/nodes")).body.nodes[0]).toMatchObject({ node_id: "n1", status: "Ready" });
    expect((await h.rest("GET", "/cluster/metrics")).body).toMatchObject({
      total_nodes: 1,
      ready_nodes: 1,
      total_workloads: 1,
    });
    expect((await h.rest("GET", "/workloads/nope")).status).toBe(404);
    expect((await h.rest("DELETE", "/workloads/legacy")).body).toMatchObject({ success: true });
    await until("deleted on the node", async () => node.replica("legacy") === undefined);
  });

  it("lets a Go persysctl drive workloads over AgentControl gRPC, with an in-band failure for bad specs", async () => {
    h = await startHarness();
    const node = await h.addNode({ id: "n1" });
    const client = new control.AgentControlClient(h.server.grpcAddress, credentials.createInsecure());
    const call = <Req, Res>(method: (req: Req, cb: (e: Error | null, r: Res) => void) => unknown, req: Req) =>
      new Promise<Res>((resolve, reject) => method.call(client, req, (e, r) => (e ? reject(e) : resolve(r))));
    try {
      const applied = await call<control.ApplyWorkloadRequest, control.ApplyWorkloadResponse>(client.applyWorkload, {
        workloadId: "go-web",
        revisionId: "",
        desiredState: "Running",
        spec: control.WorkloadSpec.fromPartial({
          type: "container",
          resources: { cpuMillicores: 100, memoryMb: 64, diskGb: 0 },
          workload: { $case: "container", value: control.ContainerSpec.fromPartial({ image: "persys-test/web:1" }) },
        }),
      });
      expect(applied.success).toBe(true);
      await until("running", async () => node.replica("go-web")?.state === "RUNNING");
      const bad = await call<control.ApplyWorkloadRequest, control.ApplyWorkloadResponse>(client.applyWorkload, {
        workloadId: "Bad_Name",
        revisionId: "",
        desiredState: "",
        spec: control.WorkloadSpec.fromPartial({
          type: "container",
          workload: { $case: "container", value: control.ContainerSpec.fromPartial({ image: "" }) },
        }),
      });
      expect(bad.success).toBe(false);
      expect(bad.failureReason).toBe(control.FailureReason.INVALID_SPEC);
      expect(bad.errorMessage).toMatch(/id/);
      const stopped = await call<control.ApplyWorkloadRequest, control.ApplyWorkloadResponse>(client.applyWorkload, {
        workloadId: "go-web",
        revisionId: "",
        desiredState: "stopped",
        spec: undefined,
      });
      expect(stopped.success).toBe(true);
      await until("stopped on the node", async () => node.replica("go-web")?.state === "STOPPED");
      const view = await call<control.GetWorkloadRequest, control.GetWorkloadResponse>(client.getWorkload, {
        workloadId: "go-web",
      });
      expect(view.workload).toMatchObject({ workloadId: "go-web", desiredState: "Stopped", assignedNodeId: "n1" });
    } finally {
      client.close();
    }
  });
});
