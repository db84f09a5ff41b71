import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configLeaves, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { loadServerConfig, serverConfigSchema } from "./server-config.js";

const file = (text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), "persys-config-")), "server.yaml");
  writeFileSync(path, text);
  return path;
};

function failure(run: () => unknown): PersysError {
  try {
    run();
  } catch (error) {
    if (error instanceof PersysError) return error;
    throw error;
  }
  throw new Error("expected an INVALID_CONFIG error");
}

describe("server config", () => {
  it("defaults to a single-node cluster on loopback with embedded stores", () => {
    const config = loadServerConfig();
    expect(config.listen).toEqual({ grpc: "127.0.0.1:7070", http: "127.0.0.1:7080" });
    expect(config.state.kind).toBe("embedded");
    expect(config.events.kind).toBe("embedded");
    expect(config.nodes).toEqual({ leaseTtlSeconds: 10, lostAfterSeconds: 30 });
  });

  it("layers file, then environment, then flags", () => {
    const config = loadServerConfig({
      file: file("state:\n  kind: etcd\n  endpoints: [http://10.0.0.1:2379]\nnodes:\n  leaseTtlSeconds: 5\n"),
      env: { PERSYS_NODES_LEASE_TTL_SECONDS: "7", PERSYS_STATE_ENDPOINTS: "http://a:2379,http://b:2379" },
      flags: { "nodes-lease-ttl-seconds": "9" },
    });
    expect(config.state).toEqual({ kind: "etcd", endpoints: ["http://a:2379", "http://b:2379"], prefix: "/persys/" });
    expect(config.nodes.leaseTtlSeconds).toBe(9);
  });

  it.each([
    {
      name: "an unknown key in the file",
      sources: () => ({ file: file("nodes:\n  leaseTTL: 5\n") }),
      path: "nodes.leaseTTL",
      reason: /unknown key \(from file/,
    },
    {
      name: "a non-number from the environment",
      sources: () => ({ env: { PERSYS_NODES_LOST_AFTER_SECONDS: "soon" } }),
      path: "nodes.lostAfterSeconds",
      reason: /environment variable PERSYS_NODES_LOST_AFTER_SECONDS/,
    },
    {
      name: "etcd without endpoints",
      sources: () => ({ flags: { "state-kind": "etcd" } }),
      path: "state.endpoints",
      reason: /at least one etcd endpoint/,
    },
    {
      name: "a bad listen address from a flag",
      sources: () => ({ flags: { "listen-grpc": "localhost" } }),
      path: "listen.grpc",
      reason: /host:port.*flag --listen-grpc/,
    },
    {
      name: "a file that is not a mapping",
      sources: () => ({ file: file("- a\n- b\n") }),
      path: "file",
      reason: /mapping/,
    },
  ])("rejects $name with INVALID_CONFIG naming the key", ({ sources, path, reason }) => {
    const error = failure(() => loadServerConfig(sources()));
    expect(error.code).toBe("INVALID_CONFIG");
    const detail = error.details.find((d) => d.path === path);
    expect(detail?.reason).toMatch(reason);
  });

  it("reports every bad key at once", () => {
    const error = failure(() =>
      loadServerConfig({ env: { PERSYS_NODES_LEASE_TTL_SECONDS: "0", PERSYS_LOG_LEVEL: "loud" } }),
    );
    expect(error.details.map((d) => d.path).sort()).toEqual(["log.level", "nodes.leaseTtlSeconds"]);
  });

  it("derives one environment variable and one flag per settable key", () => {
    const leaves = configLeaves(serverConfigSchema);
    expect(leaves.find((l) => l.path === "nodes.leaseTtlSeconds")).toMatchObject({
      env: "PERSYS_NODES_LEASE_TTL_SECONDS",
      flag: "--nodes-lease-ttl-seconds",
      kind: "number",
    });
    expect(new Set(leaves.map((l) => l.env)).size).toBe(leaves.length);
  });
});
