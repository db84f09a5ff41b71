import { agent, api } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { type ContainerReplica, desiredReplicaFromRequest } from "../../replicas/desired-replica.js";
import { containerCreateOptions } from "./container-options.js";

const replica = (
  container: Partial<api.ContainerSpec>,
  resources = { cpuMillicores: 500, memoryMib: 256, diskGib: 0 },
): ContainerReplica =>
  desiredReplicaFromRequest(
    agent.ApplyWorkloadRequest.fromPartial({
      id: "web-0",
      persys: {
        workload: api.Workload.fromPartial({
          id: "web",
          kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
          resources,
          labels: { tier: "front" },
          spec: {
            $case: "container",
            value: api.ContainerSpec.fromPartial({ image: "persys-test/web:1", ...container }),
          },
        }),
        replicaIndex: 0,
        generation: 3,
        nodeId: "n1",
        revision: "r1",
      },
    }),
  ) as ContainerReplica;

describe("containerCreateOptions", () => {
  it("names the container, labels it and sets hard limits, stop timeout and restart policy", () => {
    const o = containerCreateOptions(replica({ stopTimeoutSeconds: 4 }), { name: "web-0", nodeId: "n1" });
    expect(o).toMatchObject({
      name: "web-0",
      Image: "persys-test/web:1",
      StopTimeout: 4,
      Labels: {
        tier: "front",
        "persys.managed": "true",
        "persys.workload": "web",
        "persys.replica": "0",
        "persys.revision": "r1",
        "persys.node": "n1",
        "persys.generation": "3",
        "persys.id": "web-0",
      },
      HostConfig: {
        NanoCpus: 500_000_000,
        Memory: 256 * 1_048_576,
        RestartPolicy: { Name: "on-failure", MaximumRetryCount: 0 },
      },
    });
    expect(o.Entrypoint).toBeUndefined();
    expect(o.Cmd).toBeUndefined();
    expect(o.HostConfig?.LogConfig).toBeUndefined();
  });

  it.each([
    {
      name: "published port with host ip and protocol",
      container: {
        ports: [{ containerPort: 53, hostPort: 5353, protocol: api.Protocol.PROTOCOL_UDP, hostIp: "127.0.0.1" }],
      },
      check: (o: ReturnType<typeof containerCreateOptions>) => {
        expect(o.ExposedPorts).toEqual({ "53/udp": {} });
        expect(o.HostConfig?.PortBindings).toEqual({ "53/udp": [{ HostIp: "127.0.0.1", HostPort: "5353" }] });
      },
    },
    {
      name: "host port 0 exposes without publishing",
      container: { ports: [{ containerPort: 8080, hostPort: 0, protocol: api.Protocol.PROTOCOL_TCP, hostIp: "" }] },
      check: (o: ReturnType<typeof containerCreateOptions>) => {
        expect(o.ExposedPorts).toEqual({ "8080/tcp": {} });
        expect(o.HostConfig?.PortBindings).toEqual({});
      },
    },
    {
      name: "bind and named volumes as mounts",
      container: {
        volumes: [
          { source: { $case: "hostPath" as const, value: "/srv" }, containerPath: "/data", readOnly: true },
          { source: { $case: "volume" as const, value: "cache" }, containerPath: "/cache", readOnly: false },
        ],
      },
      check: (o: ReturnType<typeof containerCreateOptions>) =>
        expect(o.HostConfig?.Mounts).toEqual([
          { Type: "bind", Source: "/srv", Target: "/data", ReadOnly: true },
          { Type: "volume", Source: "cache", Target: "/cache", ReadOnly: false },
        ]),
    },
    {
      name: "command replaces the entrypoint, args the command; env, user, working dir",
      container: {
        command: ["httpd"],
        args: ["-f", "-p", "80"],
        env: { A: "1", B: "x=y" },
        user: "65534:65534",
        workingDir: "/www",
      },
      check: (o: ReturnType<typeof containerCreateOptions>) =>
        expect(o).toMatchObject({
          Entrypoint: ["httpd"],
          Cmd: ["-f", "-p", "80"],
          Env: ["A=1", "B=x=y"],
          User: "65534:65534",
          WorkingDir: "/www",
        }),
    },
    {
      name: "healthcheck in nanoseconds, zero fields left to Docker",
      container: {
        healthcheck: {
          command: ["wget", "-q", "localhost:8080"],
          intervalSeconds: 2,
          timeoutSeconds: 0,
          retries: 5,
          startPeriodSeconds: 1,
        },
      },
      check: (o: ReturnType<typeof containerCreateOptions>) =>
        expect(o.Healthcheck).toEqual({
          Test: ["CMD", "wget", "-q", "localhost:8080"],
          Interval: 2_000_000_000,
          Retries: 5,
          StartPeriod: 1_000_000_000,
        }),
    },
    {
      name: "restart policy always has no retry count",
      container: { restartPolicy: { mode: api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS, maxRetries: 0 } },
      check: (o: ReturnType<typeof containerCreateOptions>) =>
        expect(o.HostConfig?.RestartPolicy).toEqual({ Name: "always" }),
    },
    {
      name: "host network and privileged",
      container: { hostNetwork: true, privileged: true },
      check: (o: ReturnType<typeof containerCreateOptions>) =>
        expect(o.HostConfig).toMatchObject({ NetworkMode: "host", Privileged: true }),
    },
  ])("$name", ({ container, check }) => {
    check(containerCreateOptions(replica(container), { name: "web-0", nodeId: "n1" }));
  });

  it("leaves out limits that are zero and adds log rotation when asked", () => {
    const o = containerCreateOptions(replica({}, { cpuMillicores: 0, memoryMib: 0, diskGib: 0 }), {
      name: "web-0",
      nodeId: "n1",
      logs: { maxSizeMib: 10, maxFiles: 3 },
    });
    expect(o.HostConfig?.NanoCpus).toBeUndefined();
    expect(o.HostConfig?.Memory).toBeUndefined();
    expect(o.HostConfig?.LogConfig).toEqual({ Type: "json-file", Config: { "max-size": "10m", "max-file": "3" } });
  });
});
