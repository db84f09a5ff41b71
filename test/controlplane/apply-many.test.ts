/**
 * ApplyWorkloads (REST `POST /v1/workloads`, gRPC) on the real control plane, etcd and Redis: all or
 * nothing on bad input (every failing field named under `workloads[i]`), idempotent re-apply,
 * placement of every workload, and concurrent single applies sharing store transactions without
 * losing any of them.
 */
import { credentials, type ServiceError } from "@grpc/grpc-js";
import { api } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { container, type Harness, startHarness, until } from "./control-plane-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ids = async (harness: Harness) =>
  (((await harness.rest("GET", "/v1/workloads")).body.workloads ?? []) as { id: string }[]).map((w) => w.id).sort();

describe("applying many workloads at once", () => {
  it("writes nothing when one workload is bad, naming it; then applies all, idempotently, and places them", async () => {
    h = await startHarness();
    await h.addNode({ id: "n1" });
    const bad = await h.rest("POST", "/v1/workloads", {
      workloads: [
        container("a"),
        container("b", { container: { image: "" } }),
        container("c", { resources: { cpuMillicores: -1, memoryMib: 64 } }),
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_SPEC");
    const paths = (bad.body.details as { path: string }[]).map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(["workloads[1].container.image"]));
    expect(paths.some((p) => p.startsWith("workloads[2]."))).toBe(true);
    expect(paths.some((p) => p.startsWith("workloads[0]"))).toBe(false);
    expect(await ids(h)).toEqual([]);

    const duplicate = await h.rest("POST", "/v1/workloads", { workloads: [container("a"), container("a")] });
    expect([duplicate.status, duplicate.body.details[0].path]).toEqual([400, "workloads[1].id"]);
    expect(await ids(h)).toEqual([]);

    const batch = { workloads: [container("a"), container("b"), container("c", { replicas: 2 })] };
    const first = await h.rest("POST", "/v1/workloads", batch);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r: any) => [r.workload.id, r.created ?? false, r.changed ?? false])).toEqual([
      ["a", true, true],
      ["b", true, true],
      ["c", true, true],
    ]);
    expect(await ids(h)).toEqual(["a", "b", "c"]);

    const again = await h.rest("POST", "/v1/workloads", batch);
    expect(again.body.results.map((r: any) => r.changed ?? false)).toEqual([false, false, false]);
    const revision = first.body.results[2].workload.status.revision;
    expect(again.body.results[2].workload.status.revision).toBe(revision);

    // A changed spec in the batch is an update of that workload only.
    const changed = await h.rest("POST", "/v1/workloads", {
      workloads: [container("a"), container("b", { replicas: 2 }), container("c", { replicas: 2 })],
    });
    expect(changed.body.results.map((r: any) => r.changed ?? false)).toEqual([false, true, false]);

    await until("every replica running", async () => {
      const list = (await h!.rest("GET", "/v1/workloads")).body.workloads as any[];
      return list.every((w) => w.status.state === "WORKLOAD_STATE_RUNNING") && list.length === 3;
    });
    const events = await h.rest("GET", "/v1/events?workloadId=b");
    const applied = (events.body.events as any[]).filter((e) => e.type === "WorkloadApplied");
    expect(applied.map((e) => e.message)).toEqual(
      expect.arrayContaining([expect.stringContaining("created"), expect.stringContaining("updated")]),
    );
  });

  it("refuses a kind change before writing any of the batch", async () => {
    h = await startHarness();
    expect((await h.rest("PUT", "/v1/workloads/vm", container("vm"))).status).toBe(201);
    const kind = await h.rest("POST", "/v1/workloads", {
      workloads: [
        container("fresh"),
        { id: "vm", kind: "WORKLOAD_KIND_COMPOSE", compose: { inlineYaml: "services: {web: {image: x}}" } },
      ],
    });
    expect([kind.status, kind.body.code, kind.body.details[0].path]).toEqual([
      400,
      "INVALID_SPEC",
      "workloads[1].kind",
    ]);
    expect(await ids(h)).toEqual(["vm"]);
  });

  it("loses no write when 200 single applies race for shared transactions (gRPC)", async () => {
    h = await startHarness();
    const client = new api.WorkloadServiceClient(h.server.grpcAddress, credentials.createInsecure());
    const apply = (w: api.Workload) =>
      new Promise<api.ApplyWorkloadResponse>((resolve, reject) =>
        client.applyWorkload({ workload: w }, (e: ServiceError | null, r: api.ApplyWorkloadResponse) =>
          e ? reject(e) : resolve(r),
        ),
      );
    const workload = (i: number, image = "persys-test/web:1") =>
      api.Workload.fromPartial({
        id: `w-${i}`,
        kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
        resources: { cpuMillicores: 10, memoryMib: 16 },
        spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image }) },
      });
    try {
      const created = await Promise.all(Array.from({ length: 200 }, (_, i) => apply(workload(i))));
      expect(created.every((r) => r.created && r.changed)).toBe(true);
      // Half of them again with a new image, half unchanged, all at once.
      const second = await Promise.all(
        Array.from({ length: 200 }, (_, i) => apply(workload(i, i % 2 ? "persys-test/web:2" : "persys-test/web:1"))),
      );
      expect(second.map((r) => r.changed)).toEqual(Array.from({ length: 200 }, (_, i) => i % 2 === 1));
      const list = (await h.rest("GET", "/v1/workloads?pageSize=500")).body.workloads as any[];
      expect(list).toHaveLength(200);
      const images = new Map(list.map((w) => [w.id, w.container.image]));
      expect(images.get("w-1")).toBe("persys-test/web:2");
      expect(images.get("w-2")).toBe("persys-test/web:1");
      expect([...images.values()].filter((image) => image === "persys-test/web:2")).toHaveLength(100);
    } finally {
      client.close();
    }
  });
});
