/**
 * A node whose runtime cannot work — Docker does not answer, or the disk is full — stays a node: it
 * registers and heartbeats with RuntimeReady=False and the reason, and applies fail with
 * RUNTIME_UNAVAILABLE instead of crashing anything.
 */
import { credentials, Metadata } from "@grpc/grpc-js";
import { agent, api } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "./support/agent-harness.js";
import { WEB_IMAGE } from "./support/docker-fixtures.js";

let h: DockerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const condition = (node: any) => (node.conditions as any[]).find((c) => c.type === "RuntimeReady");

describe("runtime unavailable", () => {
  it.each([
    {
      name: "Docker does not answer",
      flags: (id: string) => ({ "runtimes-docker-socket": `/tmp/persys-no-docker-${id}.sock` }),
      reason: "DockerUnavailable",
      message: /does not answer: .*ENOENT/,
    },
    {
      name: "the disk is full (below the free-space floor)",
      flags: () => ({ "resources-min-free-disk-mib": String(1024 * 1024 * 1024) }),
      reason: "DiskFull",
      message: /disk almost full: .* MiB free \(need \d+ MiB\)/,
    },
  ])(
    "$name: RuntimeReady=False with the reason, heartbeats go on, applies fail typed",
    async ({ flags, reason, message }) => {
      h = await startDockerHarness();
      const node = await h.addAgent("sick", flags(h.nodeId("sick")));
      const got = await until("first heartbeat recorded", async () => {
        const n = await h!.rest("GET", `/v1/nodes/${node.nodeId}`);
        return n.body.node.lastHeartbeatAt ? n : undefined;
      });
      expect(condition(got.body.node)).toMatchObject({ status: "CONDITION_STATUS_FALSE", reason });
      expect(condition(got.body.node).message).toMatch(message);

      // Still heartbeating well past the lease TTL (2 s).
      const firstBeat = Date.parse(got.body.node.lastHeartbeatAt);
      await new Promise((r) => setTimeout(r, 4_000));
      const later = (await h.rest("GET", `/v1/nodes/${node.nodeId}`)).body.node;
      expect(later.state).toBe("NODE_STATE_READY");
      expect(Date.parse(later.lastHeartbeatAt)).toBeGreaterThan(firstBeat);

      // An apply straight to the agent is refused with the typed reason.
      const client = new agent.AgentServiceClient(node.endpoint, credentials.createInsecure());
      const response = await new Promise<agent.ApplyWorkloadResponse>((resolve, reject) =>
        client.applyWorkload(
          agent.ApplyWorkloadRequest.fromPartial({
            id: "direct",
            spec: { spec: { $case: "container", value: agent.ContainerSpec.fromPartial({ image: WEB_IMAGE }) } },
          }),
          new Metadata(),
          (e, r) => (e ? reject(e) : resolve(r)),
        ),
      );
      client.close();
      expect(response.applied).toBe(false);
      expect(response.status?.persys?.reason?.code).toBe(api.ErrorCode.RUNTIME_UNAVAILABLE);
      expect(response.message).toMatch(new RegExp(`runtime unavailable: ${reason}`));

      // Through the API, the replica fails with RUNTIME_UNAVAILABLE (retryable: the node may recover).
      const wid = `sick-${h.id}`;
      await h.rest("PUT", `/v1/workloads/${wid}`, {
        id: wid,
        kind: "WORKLOAD_KIND_CONTAINER",
        container: { image: WEB_IMAGE },
      });
      const failed = await until("replica failed", async () => {
        const r = await h!.replica(wid);
        return r?.state === "REPLICA_STATE_FAILED" ? r : undefined;
      });
      expect(failed.reason).toMatchObject({ code: "RUNTIME_UNAVAILABLE", retryable: true });
      expect(node.replicas.size).toBe(0);
    },
  );
});
