/**
 * The agent driven as a Go scheduler drives the Go compute-agent: `persys.agent.v1.AgentService`
 * requests with only the Go fields (no `persys` extension), idempotent by revision, with Go's
 * status, list, health and action views.
 */
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { agent } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { type DockerHarness, startDockerHarness, until } from "./support/agent-harness.js";
import { docker, httpText, WEB_IMAGE, workloadContainers } from "./support/docker-fixtures.js";

let h: DockerHarness | undefined;
let client: agent.AgentServiceClient | undefined;
afterEach(async () => {
  client?.close();
  client = undefined;
  await h?.close();
  h = undefined;
});

/** One unary call as a promise: `rpc((md, cb) => client.method(request, md, cb))`. */
function rpc<T>(run: (md: Metadata, cb: (e: ServiceError | null, r: T) => void) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => run(new Metadata(), (e, r) => (e ? reject(e) : resolve(r))));
}

describe("a Go scheduler driving the agent", () => {
  it("applies a Go-only container, skips the same revision, stops without recreate, lists, deletes", async () => {
    h = await startDockerHarness();
    const node = await h.addAgent("go");
    client = new agent.AgentServiceClient(node.endpoint, credentials.createInsecure());
    const c = client;
    const port = await freePort();
    const id = `goweb-${h.id}`;
    const request = (desired: agent.DesiredState) =>
      agent.ApplyWorkloadRequest.fromPartial({
        id,
        type: agent.WorkloadType.WORKLOAD_TYPE_CONTAINER,
        revisionId: "go-rev-1",
        desiredState: desired,
        spec: {
          spec: {
            $case: "container",
            value: agent.ContainerSpec.fromPartial({
              image: WEB_IMAGE,
              env: { FROM: "go" },
              ports: [{ hostPort: port, containerPort: 8080, protocol: "tcp" }],
              resources: { cpuShares: 256, memoryBytes: 32 * 1_048_576, memorySwapBytes: 0 },
              restartPolicy: { policy: "always", maxRetryCount: 0 },
              labels: { owner: "go-scheduler" },
            }),
          },
        },
      });

    const applied = await rpc<agent.ApplyWorkloadResponse>((md, cb) =>
      c.applyWorkload(request(agent.DesiredState.DESIRED_STATE_RUNNING), md, cb),
    );
    expect(applied).toMatchObject({ applied: true, skipped: false });
    expect(applied.status?.actualState).toBe(agent.ActualState.ACTUAL_STATE_PENDING);
    const running = await until("Go status Running", async () => {
      const s = (await rpc<agent.GetWorkloadStatusResponse>((md, cb) => c.getWorkloadStatus({ id }, md, cb))).status;
      return s?.actualState === agent.ActualState.ACTUAL_STATE_RUNNING ? s : undefined;
    });
    expect(running).toMatchObject({ id, revisionId: "go-rev-1", type: agent.WorkloadType.WORKLOAD_TYPE_CONTAINER });
    expect(running.metadata["container.id"]).toMatch(/^[0-9a-f]{64}$/);
    expect(await until("port answers", () => httpText(`http://127.0.0.1:${port}/`))).toBe("persys web ok\n");
    const inspected = await docker.getContainer(running.metadata["container.id"]!).inspect();
    expect(inspected.Name).toBe(`/${id}`);
    expect(inspected.Config.Env).toContain("FROM=go");
    expect(inspected.Config.Labels).toMatchObject({
      owner: "go-scheduler",
      "persys.workload": id,
      "persys.revision": "go-rev-1",
    });
    expect(inspected.HostConfig).toMatchObject({
      CpuShares: 256,
      Memory: 32 * 1_048_576,
      RestartPolicy: { Name: "always" },
    });

    const again = await rpc<agent.ApplyWorkloadResponse>((md, cb) =>
      c.applyWorkload(request(agent.DesiredState.DESIRED_STATE_RUNNING), md, cb),
    );
    expect(again).toMatchObject({ applied: true, skipped: true });

    await rpc<agent.ApplyWorkloadResponse>((md, cb) =>
      c.applyWorkload(request(agent.DesiredState.DESIRED_STATE_STOPPED), md, cb),
    );
    await until("Go status Stopped", async () => {
      const s = (await rpc<agent.GetWorkloadStatusResponse>((md, cb) => c.getWorkloadStatus({ id }, md, cb))).status;
      return s?.actualState === agent.ActualState.ACTUAL_STATE_STOPPED;
    });
    const [stopped] = await workloadContainers(node.nodeId, id);
    expect(stopped!.Id).toBe(running.metadata["container.id"]);

    const list = await rpc<agent.ListWorkloadsResponse>((md, cb) =>
      c.listWorkloads({ type: agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED }, md, cb),
    );
    expect(list.workloads.map((w) => w.id)).toEqual([id]);
    const health = await rpc<agent.HealthCheckResponse>((md, cb) => c.healthCheck({}, md, cb));
    expect(health).toMatchObject({ healthy: true, runtimeStatus: { docker: "healthy" } });
    expect(health.memoryUtilization).toBeGreaterThan(0);
    const actions = await rpc<agent.ListActionsResponse>((md, cb) =>
      c.listActions({ workloadId: id, actionType: "apply", status: "", limit: 0, newestFirst: false }, md, cb),
    );
    expect(actions.actions.map((a) => a.status)).toEqual(["succeeded", "succeeded"]);

    expect(await rpc<agent.DeleteWorkloadResponse>((md, cb) => c.deleteWorkload({ id }, md, cb))).toMatchObject({
      success: true,
    });
    await until("container removed", async () => (await workloadContainers(node.nodeId, id)).length === 0, 20_000);
    await expect(
      rpc<agent.GetWorkloadStatusResponse>((md, cb) => c.getWorkloadStatus({ id }, md, cb)),
    ).rejects.toMatchObject({ code: 5, details: `status not found for workload ${id}` });
    expect(await rpc<agent.DeleteWorkloadResponse>((md, cb) => c.deleteWorkload({ id }, md, cb))).toMatchObject({
      success: true,
    });
  });

  it("answers an invalid Go request with applied=false and the reason, never a gRPC error", async () => {
    h = await startDockerHarness();
    const node = await h.addAgent("gobad");
    const c = new agent.AgentServiceClient(node.endpoint, credentials.createInsecure());
    client = c;
    const response = await rpc<agent.ApplyWorkloadResponse>((md, cb) =>
      c.applyWorkload(
        agent.ApplyWorkloadRequest.fromPartial({
          id: "bad",
          spec: { spec: { $case: "container", value: agent.ContainerSpec.fromPartial({ image: "" }) } },
        }),
        md,
        cb,
      ),
    );
    expect(response.applied).toBe(false);
    expect(response.message).toMatch(/^invalid request: .*spec\.container\.image: is required/);
    expect(response.status?.actualState).toBe(agent.ActualState.ACTUAL_STATE_FAILED);
    expect(response.status?.metadata.failure_reason).toBe("INVALID_SPEC");
  });
});
