import { api, PersysError, workloadRevision } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { parseSpecText } from "../spec-file/spec-document.js";
import { compose } from "./compose-builder.js";
import { type ContainerInput, container } from "./container-builder.js";
import { vm } from "./vm-builder.js";

function violations(build: () => unknown): { path: string; reason: string }[] {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_SPEC");
    return (error as PersysError).details.map((d) => ({ path: d.path, reason: d.reason }));
  }
  throw new Error("built without errors");
}

describe("container()", () => {
  it("builds the workload from friendly input, with defaults", () => {
    const w = container({
      id: "web",
      image: "nginx",
      replicas: 2,
      ports: [{ container: 80, host: 8080 }],
      memoryMiB: 256,
    });
    expect(api.Workload.toJSON(w)).toEqual({
      id: "web",
      kind: "WORKLOAD_KIND_CONTAINER",
      replicas: 2,
      resources: { memoryMib: 256 },
      desiredState: "DESIRED_STATE_RUNNING",
      updateStrategy: { type: "UPDATE_STRATEGY_TYPE_ROLLING", maxUnavailable: 1 },
      container: { image: "nginx", ports: [{ containerPort: 80, hostPort: 8080, protocol: "PROTOCOL_TCP" }] },
    });
  });

  it("gives the same revision as the same workload written in a spec file", () => {
    const built = container({
      id: "web",
      image: "nginx",
      ports: [{ container: 80, host: 8080 }],
      memoryMiB: 256,
      restart: "always",
    });
    const [doc] = parseSpecText(
      "id: web\ncontainer:\n  image: nginx\n  ports: [{containerPort: 80, hostPort: 8080}]\n  restartPolicy: {mode: always}\nresources: {memoryMib: 256}\n",
    );
    expect(workloadRevision(built)).toBe(workloadRevision(doc!.workload));
  });

  it("maps volumes, restart policies, healthchecks, secrets and placement", () => {
    const w = container({
      id: "db",
      image: "postgres:16",
      volumes: [
        { volume: "data", containerPath: "/var/lib/postgresql" },
        { hostPath: "/etc/pg", containerPath: "/etc/pg", readOnly: true },
      ],
      restart: { mode: "on-failure", maxRetries: 5 },
      healthcheck: { command: ["pg_isready"], intervalSeconds: 5 },
      secretEnv: { PGPASSWORD: { secret: "db", key: "password" } },
      placement: { nodeSelector: { disk: "ssd" }, replicaAntiAffinity: true, spread: [{ topologyKey: "zone" }] },
    });
    const spec = w.spec?.$case === "container" ? w.spec.value : undefined;
    expect(spec?.volumes.map((v) => v.source)).toEqual([
      { $case: "volume", value: "data" },
      { $case: "hostPath", value: "/etc/pg" },
    ]);
    expect(spec?.restartPolicy?.mode).toBe(api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE);
    expect(spec?.secretEnv.PGPASSWORD).toEqual({ secret: "db", key: "password" });
    expect(w.placement?.replicaAntiAffinity?.enforcement).toBe(api.Enforcement.ENFORCEMENT_REQUIRED);
    expect(w.placement?.spread[0]).toEqual({
      topologyKey: "zone",
      maxSkew: 1,
      enforcement: api.Enforcement.ENFORCEMENT_REQUIRED,
    });
  });

  it.each([
    { name: "a bad id", input: { id: "Web", image: "x" }, path: "id" },
    { name: "no image", input: { id: "web", image: "" }, path: "container.image" },
    {
      name: "a port out of range",
      input: { id: "web", image: "x", ports: [{ container: 0 }] },
      path: "container.ports[0].containerPort",
    },
    {
      name: "a duplicate host port",
      input: {
        id: "web",
        image: "x",
        ports: [
          { container: 80, host: 80 },
          { container: 81, host: 80 },
        ],
      },
      path: "container.ports[1].hostPort",
    },
    {
      name: "a bad protocol",
      input: { id: "web", image: "x", ports: [{ container: 80, protocol: "sctp" }] },
      path: "container.ports[0].protocol",
    },
    { name: "negative replicas", input: { id: "web", image: "x", replicas: -1 }, path: "replicas" },
    { name: "a misspelt field (plain JS)", input: { id: "web", image: "x", memoryMb: 5 }, path: "memoryMb" },
    {
      name: "a misspelt port field",
      input: { id: "web", image: "x", ports: [{ container: 80, hots: 1 }] },
      path: "ports[0].hots",
    },
  ])("refuses $name with INVALID_SPEC at $path", ({ input, path }) => {
    expect(violations(() => container(input as unknown as ContainerInput)).map((v) => v.path)).toContain(path);
  });

  it("hints at the right name for a misspelt field", () => {
    expect(violations(() => container({ id: "web", image: "x", memoryMb: 5 } as unknown as ContainerInput))).toEqual([
      { path: "memoryMb", reason: "unknown field (did you mean memoryMiB?)" },
    ]);
  });
});

describe("compose()", () => {
  it.each([
    { name: "inline", input: { id: "blog", inlineYaml: "services: {}" }, source: "inlineYaml" },
    { name: "git", input: { id: "shop", git: { repo: "https://git.example/shop.git", ref: "v2" } }, source: "git" },
  ])("builds from $name", ({ input, source }) => {
    const w = compose(input);
    expect(w.kind).toBe(api.WorkloadKind.WORKLOAD_KIND_COMPOSE);
    expect(w.spec?.$case === "compose" && w.spec.value.source?.$case).toBe(source);
  });

  it("passes the refresh token and the volume policy through", () => {
    const w = compose({
      id: "shop",
      git: { repo: "https://git.example/shop.git", refreshToken: "2026-12-01T22:00:00Z" },
      removeVolumesOnDelete: true,
    });
    const spec = w.spec?.$case === "compose" ? w.spec.value : undefined;
    expect(spec?.removeVolumesOnDelete).toBe(true);
    expect(spec?.source?.$case === "git" && spec.source.value.refreshToken).toBe("2026-12-01T22:00:00Z");
  });

  it.each([
    { name: "neither source", input: { id: "x" }, path: "compose" },
    { name: "both sources", input: { id: "x", inlineYaml: "a: 1", git: { repo: "r" } }, path: "compose" },
    { name: "a git source without repo", input: { id: "x", git: { repo: "" } }, path: "compose.git.repo" },
  ])("refuses $name", ({ input, path }) => {
    expect(violations(() => compose(input)).map((v) => v.path)).toContain(path);
  });
});

describe("vm()", () => {
  it("reserves what the guest has unless told otherwise", () => {
    const w = vm({
      id: "db",
      vcpus: 2,
      memoryMiB: 2048,
      imageName: "debian-12",
      disks: [{ name: "root", sizeGiB: 10, boot: true }],
    });
    expect(w.resources).toEqual({ cpuMillicores: 2000, memoryMib: 2048, diskGib: 10 });
    const spec = w.spec?.$case === "vm" ? w.spec.value : undefined;
    expect([spec?.accelerator, spec?.disks[0]?.format]).toEqual([
      api.Accelerator.ACCELERATOR_AUTO,
      api.DiskFormat.DISK_FORMAT_QCOW2,
    ]);
    expect(
      vm({ id: "db", vcpus: 2, memoryMiB: 2048, imageName: "d", cpuMillicores: 500 }).resources?.cpuMillicores,
    ).toBe(500);
  });

  it.each([
    { name: "no base image", input: { id: "v", vcpus: 1, memoryMiB: 512 }, path: "vm" },
    {
      name: "both base images",
      input: { id: "v", vcpus: 1, memoryMiB: 512, imageName: "a", imagePath: "/b" },
      path: "vm",
    },
    { name: "zero vcpus", input: { id: "v", vcpus: 0, memoryMiB: 512, imageName: "a" }, path: "vm.vcpus" },
    {
      name: "a relative image path",
      input: { id: "v", vcpus: 1, memoryMiB: 512, imagePath: "img.qcow2" },
      path: "vm.imagePath",
    },
    {
      name: "a bad accelerator",
      input: { id: "v", vcpus: 1, memoryMiB: 512, imageName: "a", accelerator: "xen" },
      path: "vm.accelerator",
    },
  ])("refuses $name", ({ input, path }) => {
    expect(violations(() => vm(input as Parameters<typeof vm>[0])).map((v) => v.path)).toContain(path);
  });
});
