import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agent, api } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { type DesiredReplica, desiredReplicaFromRequest } from "../replicas/desired-replica.js";
import { ReplicaStore } from "./replica-store.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), "persys-agent-store-"));
  dirs.push(d);
  return d;
};

const replica = (id: string, revision: string): DesiredReplica =>
  desiredReplicaFromRequest(
    agent.ApplyWorkloadRequest.fromPartial({
      id,
      persys: {
        workload: api.Workload.fromPartial({
          id: "web",
          kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
          spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "persys-test/web:1" }) },
        }),
        replicaIndex: Number(id.split("-")[1]),
        revision,
      },
    }),
  );

describe("ReplicaStore", () => {
  it("keeps desired replicas across a reopen (an agent restart)", () => {
    const dir = stateDir();
    const store = ReplicaStore.open(dir);
    store.put(replica("web-0", "r1"), 1000);
    store.put(replica("web-1", "r1"), 1000);
    store.delete("web-1");
    store.delete("web-1");
    store.close();
    const reopened = ReplicaStore.open(dir);
    expect(reopened.all().map((s) => [s.replica.id, s.replica.revision, s.createdAt])).toEqual([["web-0", "r1", 1000]]);
    reopened.close();
  });

  it("counts agent restarts per revision: kept on the same revision, reset on a new one", () => {
    const store = ReplicaStore.open(stateDir());
    store.put(replica("web-0", "r1"));
    store.recordRestarts("web-0", 2);
    store.put({ ...replica("web-0", "r1"), desired: "stopped" });
    expect(store.all()[0]).toMatchObject({ agentRestarts: 2, replica: { desired: "stopped" } });
    store.put(replica("web-0", "r2"));
    expect(store.all()[0]).toMatchObject({ agentRestarts: 0, replica: { revision: "r2" } });
    store.close();
  });

  it("fails with STORAGE_ERROR when the state dir cannot be created", () => {
    const file = join(stateDir(), "a-file");
    writeFileSync(file, "");
    const bad = join(file, "state");
    expect(() => ReplicaStore.open(bad)).toThrow(
      expect.objectContaining({ code: "STORAGE_ERROR", message: expect.stringContaining(bad) }),
    );
  });
});
