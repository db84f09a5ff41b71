import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { labelMap, loadAgentConfig } from "./agent-config.js";

describe("loadAgentConfig", () => {
  it("has usable defaults: node named after the host, local control plane, loopback listeners", () => {
    const c = loadAgentConfig({});
    expect(c.node.id).toBe(hostname());
    expect(c.controlPlane.endpoints).toEqual(["127.0.0.1:7070"]);
    expect(c.listen).toEqual({ grpc: "127.0.0.1:7071", metrics: "127.0.0.1:7072" });
    expect(c.runtimes.docker.socket).toBe("/var/run/docker.sock");
    expect(c.gc.orphanGraceSeconds).toBe(60);
    expect(c.heartbeat.intervalSeconds).toBeUndefined();
  });

  it("reads PERSYS_AGENT_* environment and flags (flags win), lists comma-separated", () => {
    const c = loadAgentConfig({
      env: {
        PERSYS_AGENT_NODE_ID: "from-env",
        PERSYS_AGENT_NODE_LABELS: "zone=a,rack=3",
        PERSYS_AGENT_CONTROL_PLANE_ENDPOINTS: "10.0.0.1:7070,10.0.0.2:7070",
        PERSYS_NODE_ID: "not-ours",
      },
      flags: { "node-id": "from-flag", "heartbeat-interval-seconds": "0.5", "gc-orphan-grace-seconds": "2" },
    });
    expect(c.node.id).toBe("from-flag");
    expect(labelMap(c.node.labels)).toEqual({ zone: "a", rack: "3" });
    expect(c.controlPlane.endpoints).toEqual(["10.0.0.1:7070", "10.0.0.2:7070"]);
    expect(c.heartbeat.intervalSeconds).toBe(0.5);
    expect(c.gc.orphanGraceSeconds).toBe(2);
  });

  it.each([
    { name: "bad node id", flags: { "node-id": "-bad" }, path: "node.id" },
    { name: "label without =", flags: { "node-labels": "zone" }, path: "node.labels[0]" },
    {
      name: "endpoint without port",
      flags: { "control-plane-endpoints": "cp.local" },
      path: "controlPlane.endpoints[0]",
    },
    { name: "unknown key from a file-like source", flags: { "listen-grpc": "127.0.0.1:99999" }, path: "listen.grpc" },
  ])("refuses $name with INVALID_CONFIG naming the key", ({ flags, path }) => {
    expect(() => loadAgentConfig({ flags })).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        details: expect.arrayContaining([expect.objectContaining({ path })]),
      }),
    );
  });
});
