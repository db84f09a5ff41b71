import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { openStateStore, type StateStoreConfig } from "./open-state-store.js";

async function failure(config: unknown): Promise<PersysError> {
  const error = await openStateStore(config as StateStoreConfig).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PersysError);
  return error as PersysError;
}

describe("openStateStore", () => {
  it.each<[string, unknown, string[]]>([
    ["no config", undefined, ["state"]],
    ["an unknown kind", { kind: "consul" }, ["kind"]],
    ["etcd without endpoints", { kind: "etcd" }, ["endpoints"]],
    ["etcd with an empty endpoint list", { kind: "etcd", endpoints: [] }, ["endpoints"]],
    ["etcd with a host without scheme", { kind: "etcd", endpoints: ["127.0.0.1:2379"] }, ["endpoints[0]"]],
    ["etcd mixing http and https", { kind: "etcd", endpoints: ["http://a:2379", "https://b:2379"] }, ["endpoints"]],
    [
      "etcd with a bad prefix and timeout",
      { kind: "etcd", endpoints: ["http://a:2379"], prefix: 1, requestTimeoutMs: 0 },
      ["prefix", "requestTimeoutMs"],
    ],
    ["embedded without dataDir", { kind: "embedded" }, ["dataDir"]],
    ["embedded with a blank dataDir", { kind: "embedded", dataDir: "  " }, ["dataDir"]],
    ["embedded with zero history", { kind: "embedded", dataDir: "/tmp/x", historyRevisions: 0 }, ["historyRevisions"]],
  ])("%s → INVALID_CONFIG naming %s", async (_name, config, fields) => {
    const error = await failure(config);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.details.map((d) => d.path)).toEqual(fields);
  });

  it("opens an embedded store in the data dir", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "persys-open-state-"));
    try {
      const store = await openStateStore({ kind: "embedded", dataDir });
      expect(store.kind).toBe("embedded");
      await store.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("fails with a retryable typed error when nothing answers at the etcd endpoint", async () => {
    const error = await failure({ kind: "etcd", endpoints: ["http://127.0.0.1:9"], requestTimeoutMs: 1000 });
    expect(["UNAVAILABLE", "DEADLINE_EXCEEDED"]).toContain(error.code);
    expect(error.retryable).toBe(true);
  });
});
