import { agent, api, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { type ContainerReplica, desiredReplicaFromRequest, replicaLabels } from "./desired-replica.js";

/** The container replica a request maps to (fails the test for another kind). */
function containerReplica(request: agent.ApplyWorkloadRequest): ContainerReplica {
  const d = desiredReplicaFromRequest(request);
  if (d.kind !== "container") throw new Error(`expected a container replica, got ${d.kind}`);
  return d;
}

function persysRequest(container: Partial<api.ContainerSpec>, extra: Partial<api.Workload> = {}) {
  const workload = api.Workload.fromPartial({
    id: "web",
    kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
    resources: { cpuMillicores: 250, memoryMib: 128, diskGib: 1 },
    labels: { team: "a", "persys.secret": "no" },
    ...extra,
    spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "persys-test/web:1", ...container }) },
  });
  return agent.ApplyWorkloadRequest.fromPartial({
    id: "web-2",
    type: agent.WorkloadType.WORKLOAD_TYPE_CONTAINER,
    revisionId: "rev-a",
    desiredState: agent.DesiredState.DESIRED_STATE_RUNNING,
    persys: { workload, replicaIndex: 2, generation: 7, nodeId: "n1", revision: "rev-a" },
  });
}

function goRequest(container: Partial<agent.ContainerSpec>, extra: Partial<agent.ApplyWorkloadRequest> = {}) {
  return agent.ApplyWorkloadRequest.fromPartial({
    id: "legacy",
    type: agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED,
    revisionId: "go-rev",
    desiredState: agent.DesiredState.DESIRED_STATE_UNSPECIFIED,
    spec: {
      spec: { $case: "container", value: agent.ContainerSpec.fromPartial({ image: "busybox:1", ...container }) },
    },
    ...extra,
  });
}

describe("desiredReplicaFromRequest — the Persys extension", () => {
  it("maps the full workload: identity, limits, ports, volumes, policies, labels", () => {
    const d = desiredReplicaFromRequest(
      persysRequest({
        command: ["httpd"],
        args: ["-f"],
        env: { A: "1" },
        ports: [{ containerPort: 8080, hostPort: 18080, protocol: api.Protocol.PROTOCOL_UDP, hostIp: "127.0.0.1" }],
        volumes: [
          { source: { $case: "hostPath", value: "/srv" }, containerPath: "/data", readOnly: true },
          { source: { $case: "volume", value: "cache" }, containerPath: "/cache", readOnly: false },
        ],
        restartPolicy: { mode: api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS, maxRetries: 0 },
        healthcheck: { command: ["true"], intervalSeconds: 2, timeoutSeconds: 1, retries: 3, startPeriodSeconds: 0 },
        user: "65534",
        workingDir: "/tmp",
        stopTimeoutSeconds: 3,
      }),
    );
    expect(d).toMatchObject({
      id: "web-2",
      workloadId: "web",
      index: 2,
      generation: 7,
      revision: "rev-a",
      desired: "running",
      source: "persys",
      resources: { cpuMillicores: 250, memoryMib: 128, diskGib: 1 },
    });
    expect(d.spec).toMatchObject({
      image: "persys-test/web:1",
      entrypoint: ["httpd"],
      cmd: ["-f"],
      env: { A: "1" },
      ports: [{ containerPort: 8080, hostPort: 18080, protocol: "udp", hostIp: "127.0.0.1" }],
      mounts: [
        { kind: "bind", source: "/srv", target: "/data", readOnly: true },
        { kind: "volume", source: "cache", target: "/cache", readOnly: false },
      ],
      restart: { mode: "always", maxRetries: 0 },
      healthcheck: { command: ["true"], intervalSeconds: 2 },
      user: "65534",
      workingDir: "/tmp",
      stopTimeoutSeconds: 3,
      labels: { team: "a" },
      limits: { nanoCpus: 250_000_000, memoryBytes: 128 * 1_048_576, cpuShares: 0 },
    });
  });

  it.each([
    {
      name: "unset restart policy is on-failure without limit",
      container: {},
      want: { mode: "on-failure", maxRetries: 0 },
    },
    {
      name: "on-failure keeps its limit",
      container: { restartPolicy: { mode: api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE, maxRetries: 4 } },
      want: { mode: "on-failure", maxRetries: 4 },
    },
    {
      name: "no",
      container: { restartPolicy: { mode: api.RestartPolicyMode.RESTART_POLICY_MODE_NO, maxRetries: 0 } },
      want: { mode: "no", maxRetries: 0 },
    },
  ])("restart policy: $name", ({ container, want }) => {
    expect(containerReplica(persysRequest(container)).spec.restart).toEqual(want);
  });

  it("defaults the stop timeout to 10 s and takes the desired state from the request, else the spec", () => {
    const d = containerReplica(persysRequest({}));
    expect(d.spec.stopTimeoutSeconds).toBe(10);
    const stoppedInSpec = persysRequest({}, { desiredState: api.DesiredState.DESIRED_STATE_STOPPED });
    stoppedInSpec.desiredState = agent.DesiredState.DESIRED_STATE_UNSPECIFIED;
    expect(desiredReplicaFromRequest(stoppedInSpec).desired).toBe("stopped");
    const stoppedOnWire = persysRequest({});
    stoppedOnWire.desiredState = agent.DesiredState.DESIRED_STATE_STOPPED;
    expect(desiredReplicaFromRequest(stoppedOnWire).desired).toBe("stopped");
  });

  it.each([
    { name: "empty image", container: { image: "" }, path: "persys.workload.container.image" },
    {
      name: "bad port",
      container: { ports: [{ containerPort: 0, hostPort: 1, protocol: 0, hostIp: "" }] },
      path: "persys.workload.container.ports[0].containerPort",
    },
    {
      name: "relative host path",
      container: {
        volumes: [{ source: { $case: "hostPath" as const, value: "srv" }, containerPath: "/d", readOnly: false }],
      },
      path: "persys.workload.container.volumes[0].hostPath",
    },
    {
      name: "a secret file at a relative path",
      container: { secretFiles: [{ ref: { secret: "s", key: "k" }, path: "run/k", mode: 0 }] },
      path: "persys.workload.container.secretFiles[0].path",
    },
  ])("refuses $name with INVALID_SPEC naming the field", ({ container, path }) => {
    const error = (() => {
      try {
        desiredReplicaFromRequest(persysRequest(container as Partial<api.ContainerSpec>));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_SPEC");
    expect((error as PersysError).details.map((d) => d.path)).toContain(path);
  });

  it("maps a compose workload to its Compose project (one per replica) and refuses a credentials secret", () => {
    const compose = (git?: Partial<api.GitSource>) => {
      const request = persysRequest({});
      request.persys!.replicaIndex = 1;
      request.persys!.workload = api.Workload.fromPartial({
        id: "stack",
        kind: api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
        labels: { team: "web" },
        spec: {
          $case: "compose",
          value: api.ComposeSpec.fromPartial({
            source: git
              ? { $case: "git", value: api.GitSource.fromPartial({ repo: "git://127.0.0.1/x.git", ...git }) }
              : { $case: "inlineYaml", value: "services:\n  web:\n    image: nginx\n" },
            env: { TAG: "1" },
          }),
        },
      });
      return desiredReplicaFromRequest(request);
    };
    expect(compose()).toMatchObject({
      kind: "compose",
      index: 1,
      spec: { project: "stack-1", source: { kind: "inline" }, env: { TAG: "1" }, labels: { team: "web" } },
    });
    expect(compose({ ref: "v1" })).toMatchObject({
      spec: { source: { kind: "git", repo: "git://127.0.0.1/x.git", ref: "v1", path: "compose.yaml" } },
    });
    expect(() => compose({ credentialsSecret: "deploy-key" })).toThrow(
      expect.objectContaining({
        code: "INVALID_SPEC",
        details: [expect.objectContaining({ path: "persys.workload.compose.git.credentialsSecret" })],
      }),
    );
  });
});

describe("desiredReplicaFromRequest — a Go scheduler's request", () => {
  it("maps the Go ContainerSpec: command+args as the command, bind volumes, CPU shares, memory, restart", () => {
    const d = containerReplica(
      goRequest({
        command: ["sleep"],
        args: ["60"],
        env: { B: "2" },
        volumes: [{ hostPath: "/var/x", containerPath: "/x", readOnly: false }],
        ports: [{ hostPort: 8081, containerPort: 80, protocol: "UDP" }],
        resources: { cpuShares: 512, memoryBytes: 64 * 1_048_576, memorySwapBytes: 0 },
        restartPolicy: { policy: "unless-stopped", maxRetryCount: 0 },
        labels: { app: "legacy", "persys.node": "spoof" },
        managedVolumes: [
          {
            name: "data",
            driver: "local",
            sizeGb: 1,
            accessMode: "",
            fsType: "",
            mountPath: "/data",
            readOnly: false,
            retainPolicy: "Retain",
          },
        ],
      }),
    );
    expect(d).toMatchObject({
      id: "legacy",
      workloadId: "legacy",
      index: 0,
      generation: 0,
      revision: "go-rev",
      desired: "running",
      source: "go",
    });
    expect(d.spec).toMatchObject({
      cmd: ["sleep", "60"],
      env: { B: "2" },
      ports: [{ containerPort: 80, hostPort: 8081, protocol: "udp", hostIp: "" }],
      mounts: [
        { kind: "bind", source: "/var/x", target: "/x", readOnly: false },
        { kind: "managed", source: "data", target: "/data", removeOnDelete: false },
      ],
      restart: { mode: "unless-stopped", maxRetries: 0 },
      labels: { app: "legacy" },
      limits: { nanoCpus: 0, memoryBytes: 64 * 1_048_576, cpuShares: 512 },
    });
    expect(d.spec.entrypoint).toBeUndefined();
    expect(d.resources.memoryMib).toBe(64);
  });

  it("derives a stable revision when the request has none", () => {
    const a = desiredReplicaFromRequest(goRequest({}, { revisionId: "" }));
    const b = desiredReplicaFromRequest(goRequest({}, { revisionId: "" }));
    const c = desiredReplicaFromRequest(goRequest({ image: "busybox:2" }, { revisionId: "" }));
    expect(a.revision).toMatch(/^[0-9a-f]{24}$/);
    expect(b.revision).toBe(a.revision);
    expect(c.revision).not.toBe(a.revision);
  });

  it.each([
    { name: "no spec", request: agent.ApplyWorkloadRequest.fromPartial({ id: "x" }), path: "spec.container" },
    { name: "no image", request: goRequest({ image: " " }), path: "spec.container.image" },
    {
      name: "bad restart policy",
      request: goRequest({ restartPolicy: { policy: "sometimes", maxRetryCount: 0 } }),
      path: "spec.container.restart_policy.policy",
    },
    {
      name: "relative volume",
      request: goRequest({ volumes: [{ hostPath: "x", containerPath: "/x", readOnly: false }] }),
      path: "spec.container.volumes[0].host_path",
    },
    {
      name: "bad protocol",
      request: goRequest({ ports: [{ hostPort: 1, containerPort: 1, protocol: "sctp" }] }),
      path: "spec.container.ports[0].protocol",
    },
  ])("refuses $name", ({ request, path }) => {
    expect(() => desiredReplicaFromRequest(request)).toThrow(
      expect.objectContaining({
        code: "INVALID_SPEC",
        details: expect.arrayContaining([expect.objectContaining({ path })]),
      }),
    );
  });
});

describe("replicaLabels", () => {
  it("carries the replica's identity for adoption and garbage collection", () => {
    const d = desiredReplicaFromRequest(persysRequest({}));
    expect(replicaLabels(d, "n1")).toEqual({
      "persys.managed": "true",
      "persys.workload": "web",
      "persys.replica": "2",
      "persys.revision": "rev-a",
      "persys.node": "n1",
      "persys.generation": "7",
      "persys.id": "web-2",
    });
  });
});
