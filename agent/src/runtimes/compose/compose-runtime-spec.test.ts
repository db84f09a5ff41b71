import { agent, api, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { composeFromGo, composeRuntimeSpec } from "./compose-runtime-spec.js";

const workload = api.Workload.fromPartial({ id: "shop", labels: { team: "a", "persys.node": "spoof" } });

describe("composeRuntimeSpec", () => {
  it.each([
    { name: "no project name", projectName: "", index: 0, project: "shop-0" },
    { name: "no project name, replica 2", projectName: "", index: 2, project: "shop-2" },
    { name: "a project name", projectName: "store", index: 0, project: "store" },
    { name: "a project name, replica 1", projectName: "store", index: 1, project: "store-1" },
  ])("names the project with $name", ({ projectName, index, project }) => {
    const spec = api.ComposeSpec.fromPartial({ projectName, source: { $case: "inlineYaml", value: "x" } });
    expect(composeRuntimeSpec(spec, workload, index).project).toBe(project);
  });

  it("keeps the workload's labels but not persys.* ones", () => {
    const spec = api.ComposeSpec.fromPartial({ source: { $case: "inlineYaml", value: "x" } });
    expect(composeRuntimeSpec(spec, workload, 0).labels).toEqual({ team: "a" });
  });
});

describe("composeFromGo", () => {
  const request = (composeYaml: string) =>
    agent.ApplyWorkloadRequest.fromPartial({
      id: "legacy",
      type: agent.WorkloadType.WORKLOAD_TYPE_COMPOSE,
      spec: { spec: { $case: "compose", value: { projectName: "Legacy.App", composeYaml, env: {} } } },
    });
  const file =
    "services:\n  web:\n    image: persys-test/web:1\n    deploy: { resources: { limits: { memory: 64m } } }\n";

  it.each([
    { name: "plain YAML", text: file },
    { name: "base64", text: Buffer.from(file).toString("base64") },
  ])("reads the file as $name and sums its resources", ({ text }) => {
    const { spec, resources } = composeFromGo(request(text));
    expect(spec.source).toEqual({ kind: "inline", yaml: file });
    expect(spec.project).toBe("legacy-app");
    expect(resources).toEqual({ cpuMillicores: 0, memoryMib: 64, diskGib: 0 });
  });

  it("refuses a bad file with paths under spec.compose.compose_yaml", () => {
    let error: unknown;
    try {
      composeFromGo(request("services:\n  web: { image: a, ports: ['x'] }\n"));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).details.map((d) => d.path)).toEqual([
      "spec.compose.compose_yaml.services.web.ports[0]",
    ]);
  });
});
