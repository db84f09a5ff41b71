import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { api, workloadRevision } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { container } from "../builders/container-builder.js";
import { parseSpecText } from "./spec-document.js";
import { specDocumentOf, specFileText } from "./spec-document-of.js";
import { SpecFileError, type SpecProblem } from "./spec-file-error.js";

const fixture = (name: string) => join(import.meta.dirname, "test-fixtures", name);
/** Broken YAML lives here, not in a fixture file, so that the repository's YAML lint stays green. */
const inline: Record<string, string> = {
  "bad-syntax.yaml": "id: web\ncontainer:\n  image: nginx\n  image: nginx:2\n  ports: [ { containerPort: 80 }\n",
};
const read = (name: string) => parseSpecText(inline[name] ?? readFileSync(fixture(name), "utf8"), name);

function problemsOf(name: string): Pick<SpecProblem, "line" | "path" | "reason">[] {
  try {
    read(name);
  } catch (error) {
    expect(error).toBeInstanceOf(SpecFileError);
    return (error as SpecFileError).problems.map(({ line, path, reason }) => ({ line, path, reason }));
  }
  throw new Error(`${name} parsed without problems`);
}

describe("parseSpecText: good files", () => {
  it("reads a container with friendly enums, numbers in string fields and placement rules", () => {
    const [doc] = read("web.yaml");
    const w = doc!.workload;
    expect(w.kind).toBe(api.WorkloadKind.WORKLOAD_KIND_CONTAINER);
    expect(w.replicas).toBe(2);
    expect(w.labels).toEqual({ app: "web", version: "1.10" });
    expect(w.placement?.requiredNodeAffinity[0]).toEqual({
      key: "disk",
      operator: api.LabelOperator.LABEL_OPERATOR_IN,
      values: ["ssd"],
    });
    expect(w.placement?.spread[0]?.enforcement).toBe(api.Enforcement.ENFORCEMENT_PREFERRED);
    const spec = w.spec?.$case === "container" ? w.spec.value : undefined;
    expect(spec?.env).toEqual({ PORT: "8080", DEBUG: "true" });
    expect(spec?.ports.map((p) => p.protocol)).toEqual([api.Protocol.PROTOCOL_UNSPECIFIED, api.Protocol.PROTOCOL_UDP]);
    expect(spec?.restartPolicy).toEqual({ mode: api.RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE, maxRetries: 3 });
    expect(w.desiredState).toBe(api.DesiredState.DESIRED_STATE_RUNNING);
  });

  it("reads several documents, skips empty ones, and infers the kind from the member", () => {
    const docs = read("stack.yaml");
    expect(docs.map((d) => [d.workload.id, d.workload.kind, d.document, d.location.line])).toEqual([
      ["blog", api.WorkloadKind.WORKLOAD_KIND_COMPOSE, 0, 1],
      ["db", api.WorkloadKind.WORKLOAD_KIND_VM, 2, 11],
    ]);
    const vm = docs[1]!.workload.spec;
    expect(vm?.$case === "vm" && vm.value.accelerator).toBe(api.Accelerator.ACCELERATOR_KVM);
  });

  it("reads JSON with the full enum names", () => {
    const [doc] = read("web.json");
    expect(doc!.workload.id).toBe("api");
    expect(doc!.locate("container.ports[0].hostPort")).toEqual({ file: "web.json", line: 6, column: 40 });
  });

  it("reads a list of workloads in one document (the output of get -o json)", () => {
    const docs = parseSpecText(
      JSON.stringify([
        { id: "a", container: { image: "a:1" } },
        { id: "b", container: { image: "b:1" } },
      ]),
    );
    expect(docs.map((d) => d.workload.id)).toEqual(["a", "b"]);
  });

  it("ignores status (output only), so get -o yaml can be applied again", () => {
    const [doc] = parseSpecText(
      "id: a\ncontainer: {image: a}\nstatus:\n  state: WORKLOAD_STATE_RUNNING\n  anything: goes\n",
    );
    expect(doc!.workload.status).toBeUndefined();
  });

  it("round-trips a workload through specDocumentOf, with friendly enums", () => {
    const w = container({
      id: "web",
      image: "nginx",
      ports: [{ container: 53, host: 53, protocol: "udp" }],
      restart: "always",
    });
    const doc = specDocumentOf(w);
    expect(doc).toMatchObject({
      kind: "container",
      container: { ports: [{ protocol: "udp" }], restartPolicy: { mode: "always" } },
    });
    const [back] = parseSpecText(specFileText([w]));
    expect(workloadRevision(back!.workload)).toBe(workloadRevision(w));
    expect(api.Workload.toJSON(back!.workload)).toEqual(api.Workload.toJSON(w));
  });
});

describe("parseSpecText: bad files name the line and the field", () => {
  it.each([
    {
      file: "bad-fields.yaml",
      problems: [
        { line: 7, path: "container.ports[0].hostPrt", reason: "unknown field (did you mean hostPort?)" },
        {
          line: 9,
          path: "container.restartPolicy.mode",
          reason: '"sometimes" is not one of no, always, on-failure, unless-stopped',
        },
        { line: 10, path: "replicas", reason: "must be an integer" },
      ],
    },
    {
      file: "bad-values.yaml",
      problems: [
        { line: 1, path: "id", reason: expect.stringContaining("DNS-1123") },
        { line: 3, path: "container.image", reason: "is required" },
        { line: 5, path: "container.ports[0].containerPort", reason: "must be an integer in 1..65535" },
        { line: 10, path: "compose", reason: "only one of container, compose, vm may be set (container is set too)" },
      ],
    },
    {
      file: "bad-syntax.yaml",
      problems: [
        { line: 4, path: "(document)", reason: expect.stringContaining("unique") },
        { line: 6, path: "(document)", reason: expect.stringMatching(/flow sequence|end/i) },
      ],
    },
  ])("$file", ({ file, problems }) => {
    expect(problemsOf(file)).toEqual(problems);
  });

  it.each([
    {
      name: "a scalar document",
      text: "just text",
      path: "(document)",
      reason: "must be a mapping of Workload fields",
    },
    {
      name: "a list where an object belongs",
      text: "id: a\ncontainer: [1]",
      path: "container",
      reason: "must be a mapping of ContainerSpec fields",
    },
    {
      name: "an object where a list belongs",
      text: "id: a\ncontainer:\n  command: {a: 1}",
      path: "container.command",
      reason: "must be a list",
    },
    {
      name: "a boolean as a number",
      text: "id: a\nreplicas: true\ncontainer: {image: a}",
      path: "replicas",
      reason: "must be an integer",
    },
    {
      name: "a number beyond int32",
      text: "id: a\nreplicas: 3000000000\ncontainer: {image: a}",
      path: "replicas",
      reason: "must be in -2147483648..2147483647",
    },
    {
      name: "a snake_case name",
      text: "id: a\ncontainer: {image: a, working_dir: /x}",
      path: "container.working_dir",
      reason: "unknown field (did you mean workingDir?)",
    },
    {
      name: "a wrong kind",
      text: "id: a\nkind: vm\ncontainer: {image: a}",
      path: "kind",
      reason: "does not match the container spec given",
    },
    { name: "no spec at all", text: "id: a", path: "container", reason: "one of container, compose or vm is required" },
  ])("$name", ({ text, path, reason }) => {
    let problems: readonly SpecProblem[] = [];
    try {
      parseSpecText(text, "x.yaml");
    } catch (error) {
      problems = (error as SpecFileError).problems;
    }
    expect(problems.map((p) => ({ path: p.path, reason: p.reason }))).toEqual([{ path, reason }]);
    expect(problems[0]?.file).toBe("x.yaml");
  });

  it("puts every problem in the message as file:line:column: path: reason", () => {
    expect(() => read("bad-fields.yaml")).toThrow(
      /^bad-fields\.yaml:7:7: container\.ports\[0\]\.hostPrt: unknown field/,
    );
  });

  it("is an INVALID_SPEC PersysError recognised across copies", () => {
    const foreign = Object.defineProperty(new Error("x"), Symbol.for("persys.sdk.spec-file-error"), { value: true });
    expect(foreign).toBeInstanceOf(SpecFileError);
    expect(new Error("plain")).not.toBeInstanceOf(SpecFileError);
    try {
      read("bad-fields.yaml");
    } catch (error) {
      expect(error).toMatchObject({ code: "INVALID_SPEC", retryable: false });
    }
  });
});

describe("the generated field table", () => {
  it("is up to date with the protos (node sdk/scripts/gen-spec-fields.mjs)", () => {
    const script = join(import.meta.dirname, "..", "..", "scripts", "gen-spec-fields.mjs");
    const result = spawnSync(process.execPath, [script, "--check"], { encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});
