import { describe, expect, it } from "vitest";
import { PersysError } from "../errors/persys-error.js";
import { Protocol } from "../gen/persys/api/v1/container.js";
import { LabelOperator } from "../gen/persys/api/v1/placement.js";
import { Workload, WorkloadKind } from "../gen/persys/api/v1/workload.js";
import { assertValidWorkload, workloadViolations } from "./validate-workload.js";

const container = (patch: (w: Workload) => void = () => {}): Workload => {
  const w = Workload.fromJSON({
    id: "web",
    kind: "WORKLOAD_KIND_CONTAINER",
    replicas: 2,
    resources: { cpuMillicores: 250, memoryMib: 128 },
    labels: { app: "web", "persys.io/tier": "front" },
    container: {
      image: "persys-test/web:1",
      env: { GREETING: "hi" },
      ports: [{ containerPort: 8080, hostPort: 18080 }],
      volumes: [{ hostPath: "/srv/data", containerPath: "/data" }],
    },
    placement: { requiredNodeAffinity: [{ key: "zone", operator: "LABEL_OPERATOR_IN", values: ["a"] }] },
  });
  patch(w);
  return w;
};

const spec = (w: Workload) => {
  if (w.spec?.$case !== "container") throw new Error("not a container");
  return w.spec.value;
};

describe("workloadViolations", () => {
  it("accepts a well-formed container workload", () => {
    expect(workloadViolations(container())).toEqual([]);
  });

  it("accepts well-formed compose and VM workloads", () => {
    const compose = Workload.fromJSON({
      id: "stack",
      kind: "WORKLOAD_KIND_COMPOSE",
      compose: { inlineYaml: "services: {}" },
    });
    const vm = Workload.fromJSON({
      id: "vm1",
      kind: "WORKLOAD_KIND_VM",
      vm: { vcpus: 1, memoryMib: 512, imageName: "debian" },
    });
    expect([...workloadViolations(compose), ...workloadViolations(vm)]).toEqual([]);
  });

  it.each<{ name: string; patch: (w: Workload) => void; path: string; reason: RegExp }>([
    {
      name: "an upper-case id",
      patch: (w) => {
        w.id = "Web";
      },
      path: "id",
      reason: /DNS-1123/,
    },
    {
      name: "a missing id",
      patch: (w) => {
        w.id = "";
      },
      path: "id",
      reason: /required/,
    },
    {
      name: "negative replicas",
      patch: (w) => {
        w.replicas = -1;
      },
      path: "replicas",
      reason: /0\.\.1000/,
    },
    {
      name: "negative memory",
      patch: (w) => {
        w.resources!.memoryMib = -5;
      },
      path: "resources.memoryMib",
      reason: /integer/,
    },
    {
      name: "a missing image",
      patch: (w) => {
        spec(w).image = "";
      },
      path: "container.image",
      reason: /required/,
    },
    {
      name: "a port out of range",
      patch: (w) => {
        spec(w).ports[0]!.containerPort = 70_000;
      },
      path: "container.ports[0].containerPort",
      reason: /1\.\.65535/,
    },
    {
      name: "a duplicate host port",
      patch: (w) => {
        spec(w).ports.push({
          containerPort: 9090,
          hostPort: 18080,
          protocol: Protocol.PROTOCOL_UNSPECIFIED,
          hostIp: "",
        });
      },
      path: "container.ports[1].hostPort",
      reason: /already used by ports\[0\]/,
    },
    {
      name: "a relative container path",
      patch: (w) => {
        spec(w).volumes[0]!.containerPath = "data";
      },
      path: "container.volumes[0].containerPath",
      reason: /absolute/,
    },
    {
      name: "a bad env name",
      patch: (w) => {
        spec(w).env["1BAD"] = "x";
      },
      path: "container.env.1BAD",
      reason: /not a valid environment variable/,
    },
    {
      name: "a kind that does not match the spec",
      patch: (w) => {
        w.kind = WorkloadKind.WORKLOAD_KIND_VM;
      },
      path: "kind",
      reason: /does not match the container spec/,
    },
    {
      name: "In without values",
      patch: (w) => {
        w.placement!.requiredNodeAffinity[0]!.values = [];
      },
      path: "placement.requiredNodeAffinity[0].values",
      reason: /at least one value/,
    },
    {
      name: "an unspecified operator",
      patch: (w) => {
        w.placement!.requiredNodeAffinity[0]!.operator = LabelOperator.LABEL_OPERATOR_UNSPECIFIED;
      },
      path: "placement.requiredNodeAffinity[0].operator",
      reason: /one of In/,
    },
    {
      name: "a bad label key",
      patch: (w) => {
        w.labels["bad key"] = "x";
      },
      path: "labels.bad key",
      reason: /label key/,
    },
    {
      name: "no spec at all",
      patch: (w) => {
        w.spec = undefined;
      },
      path: "container",
      reason: /one of container/,
    },
  ])("names the field for $name", ({ patch, path, reason }) => {
    const violations = workloadViolations(container(patch));
    expect(violations.map((v) => v.path)).toContain(path);
    expect(violations.find((v) => v.path === path)?.reason).toMatch(reason);
  });

  it("reports every problem at once", () => {
    const w = container((w) => {
      w.id = "";
      spec(w).image = "";
    });
    expect(workloadViolations(w).map((v) => v.path)).toEqual(["id", "container.image"]);
  });

  it("throws a typed INVALID_SPEC error carrying the violations", () => {
    const error = (() => {
      try {
        assertValidWorkload(
          container((w) => {
            spec(w).image = "";
          }),
        );
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_SPEC");
    expect((error as PersysError).details).toEqual([{ path: "container.image", reason: "is required" }]);
  });
});
