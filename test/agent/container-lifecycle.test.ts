/**
 * A container through the whole life a user gives it, on the real Docker daemon: apply through the
 * control plane API → running and answering on its published port → update (new revision, new
 * container) → stop → start (same container) → delete (nothing left but the named volume); and its
 * logs through the API (REST and gRPC).
 */
import { credentials, Metadata } from "@grpc/grpc-js";
import { api } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { type DockerHarness, startDockerHarness, until } from "./support/agent-harness.js";
import { BUSYBOX_IMAGE, docker, httpText, WEB_IMAGE, workloadContainers } from "./support/docker-fixtures.js";

let h: DockerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const webSpec = (id: string, port: number, volume: string, env: Record<string, string>) => ({
  id,
  kind: "WORKLOAD_KIND_CONTAINER",
  labels: { "test-suite": "container-lifecycle" },
  resources: { cpuMillicores: 200, memoryMib: 64 },
  container: {
    image: WEB_IMAGE,
    env,
    ports: [{ containerPort: 8080, hostPort: port, hostIp: "127.0.0.1" }],
    volumes: [{ volume, containerPath: "/data" }],
    stopTimeoutSeconds: 1,
  },
});

describe("a container workload on a real agent", () => {
  it("runs, answers, rolls a new revision, stops, starts and is deleted without leftovers", async () => {
    h = await startDockerHarness();
    const agent = await h.addAgent("node");
    const node = agent.nodeId;
    const wid = `web-${h.id}`;
    const volume = `vol-${h.id}`;
    h.volumes.push(volume);
    const port = await freePort();

    const put = await h.rest("PUT", `/v1/workloads/${wid}`, webSpec(wid, port, volume, { GREETING: "one" }));
    expect(put.status).toBe(201);
    const running = await until("replica running", async () => {
      const r = await h!.replica(wid);
      return r?.state === "REPLICA_STATE_RUNNING" ? r : undefined;
    });
    expect(running).toMatchObject({
      nodeId: node,
      name: `${wid}-0`,
      endpoints: [{ kind: "ENDPOINT_KIND_PUBLISHED_PORT", address: "127.0.0.1", port, targetPort: 8080 }],
    });
    expect(await until("port answers", () => httpText(`http://127.0.0.1:${port}/`))).toBe("persys web ok\n");

    const [first] = await workloadContainers(node, wid);
    expect(first).toBeDefined();
    const inspected = await docker.getContainer(first!.Id).inspect();
    expect(inspected.Name).toBe(`/${wid}-0`);
    expect(inspected.Config.Labels).toMatchObject({
      "persys.managed": "true",
      "persys.workload": wid,
      "persys.replica": "0",
      "persys.node": node,
      "persys.revision": running.observedRevision,
      "test-suite": "container-lifecycle",
    });
    expect(inspected.Config.Env).toContain("GREETING=one");
    expect(inspected.HostConfig).toMatchObject({
      NanoCpus: 200_000_000,
      Memory: 64 * 1_048_576,
      RestartPolicy: { Name: "on-failure" },
    });
    expect(inspected.Mounts).toEqual([expect.objectContaining({ Type: "volume", Name: volume, Destination: "/data" })]);

    // Measured use (Docker stats) shows in the agent's metrics.
    const memory = await until("container memory measured", async () => {
      const text = await (await fetch(`${agent.metricsUrl}/metrics`)).text();
      const m = new RegExp(
        `persys_agent_container_memory_bytes\\{workload="${wid}",replica="0",node="${node}"\\} (\\d+)`,
      ).exec(text);
      return m && Number(m[1]) > 0 ? Number(m[1]) : undefined;
    });
    expect(memory).toBeLessThan(64 * 1_048_576);

    // Update env: a new revision, rolled as a new container.
    await h.rest("PUT", `/v1/workloads/${wid}`, webSpec(wid, port, volume, { GREETING: "two" }));
    const rolled = await until("new revision running", async () => {
      const got = await h!.rest("GET", `/v1/workloads/${wid}`);
      const s = got.body.workload.status;
      return s.state === "WORKLOAD_STATE_RUNNING" && s.replicas[0].observedRevision !== running.observedRevision
        ? s
        : undefined;
    });
    const afterUpdate = await workloadContainers(node, wid);
    expect(afterUpdate).toHaveLength(1);
    expect(afterUpdate[0]!.Id).not.toBe(first!.Id);
    const second = await docker.getContainer(afterUpdate[0]!.Id).inspect();
    expect(second.Config.Env).toContain("GREETING=two");
    expect(second.Config.Labels["persys.revision"]).toBe(rolled.replicas[0].observedRevision);
    expect(await until("port answers after the update", () => httpText(`http://127.0.0.1:${port}/`))).toBe(
      "persys web ok\n",
    );

    // Stop and start: the same container, stopped and started again.
    await h.rest("POST", `/v1/workloads/${wid}/stop`, {});
    await until("replica stopped", async () => (await h!.replica(wid))?.state === "REPLICA_STATE_STOPPED");
    expect((await docker.getContainer(second.Id).inspect()).State.Running).toBe(false);
    expect(await httpText(`http://127.0.0.1:${port}/`)).toBeUndefined();
    await h.rest("POST", `/v1/workloads/${wid}/start`, {});
    await until("replica running again", async () => (await h!.replica(wid))?.state === "REPLICA_STATE_RUNNING");
    const restarted = await docker.getContainer(second.Id).inspect();
    expect(restarted.State.Running).toBe(true);
    expect((await workloadContainers(node, wid)).map((c) => c.Id)).toEqual([second.Id]);

    // Delete: no container is left; the named volume is kept.
    await h.rest("DELETE", `/v1/workloads/${wid}`);
    await until(
      "workload gone from the API",
      async () => (await h!.rest("GET", `/v1/workloads/${wid}`)).status === 404,
    );
    await until("no container left", async () => (await workloadContainers(node, wid)).length === 0, 20_000);
    await expect(docker.getContainer(second.Id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await docker.getVolume(volume).inspect()).Name).toBe(volume);
    await until("agent forgot the replica", () => agent.replicas.size === 0);
  });

  it("streams the replica's stdout and stderr through the API: all, tail, since, then follow", async () => {
    h = await startDockerHarness();
    await h.addAgent("logs");
    const wid = `logs-${h.id}`;
    await h.rest("PUT", `/v1/workloads/${wid}`, {
      id: wid,
      kind: "WORKLOAD_KIND_CONTAINER",
      container: {
        image: BUSYBOX_IMAGE,
        command: ["sh", "-c", "echo one; echo two >&2; echo three; while true; do sleep 0.3; echo tick; done"],
        stopTimeoutSeconds: 1,
      },
    });
    await until("running", async () => (await h!.replica(wid))?.state === "REPLICA_STATE_RUNNING");

    // REST, NDJSON: everything so far.
    const all = await until("first lines written", async () => {
      const res = await fetch(`${h!.httpUrl}/v1/workloads/${wid}/logs`);
      const lines = (await res.text())
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      return lines.length >= 3 ? lines : undefined;
    });
    // Each stream in order (Docker does not order stdout against stderr).
    const of = (stream: string) => all.filter((l: any) => l.stream === stream).map((l: any) => l.line);
    expect(of("LOG_STREAM_STDOUT").slice(0, 2)).toEqual(["one", "three"]);
    expect(of("LOG_STREAM_STDERR")).toEqual(["two"]);
    expect(all[0].nodeId).toBe(h.nodeId("logs"));
    expect(all[0].replicaIndex ?? 0).toBe(0); // proto3 JSON leaves out zero
    expect(Date.parse(all[0].time)).toBeGreaterThan(Date.now() - 60_000);

    // REST with tailLines: only the last lines.
    const tail = await fetch(`${h.httpUrl}/v1/workloads/${wid}/logs?tailLines=1`);
    expect(tail.status).toBe(200);
    expect((await tail.text()).trim().split("\n")).toHaveLength(1);

    // REST with since: only lines written from then on.
    const cut = new Date(Date.now() + 500);
    await new Promise((r) => setTimeout(r, 1_500));
    const since = await fetch(`${h.httpUrl}/v1/workloads/${wid}/logs?since=${encodeURIComponent(cut.toISOString())}`);
    const late = (await since.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((l: any) => l.line === "tick" && Date.parse(l.time) >= cut.getTime())).toBe(true);

    // gRPC, follow: new lines keep coming until the client cancels.
    const client = new api.WorkloadServiceClient(h.grpcAddress, credentials.createInsecure());
    const call = client.streamWorkloadLogs(
      { workloadId: wid, follow: true, tailLines: 0, service: "" },
      new Metadata(),
    );
    const followed: string[] = [];
    await new Promise<void>((resolve, reject) => {
      call.on("data", (m: api.StreamWorkloadLogsResponse) => {
        followed.push(m.line);
        if (followed.length >= 2) resolve();
      });
      call.on("error", (e) => (followed.length >= 2 ? resolve() : reject(e)));
      setTimeout(() => reject(new Error(`followed only ${JSON.stringify(followed)}`)), 10_000).unref();
    });
    call.cancel();
    client.close();
    expect(followed.slice(0, 2)).toEqual(["tick", "tick"]);

    // A replica index that is not placed is NOT_FOUND.
    const missing = await fetch(`${h.httpUrl}/v1/workloads/${wid}/logs?replicaIndex=5`);
    expect(missing.status).toBe(404);
  });
});
