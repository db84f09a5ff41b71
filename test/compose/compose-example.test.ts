/**
 * The example under examples/compose-stack stays true: its workload spec file parses and validates,
 * the inlined file is compose.yaml, its resources default to the services' sum, and Docker Compose
 * itself (docker-compose 1.29) accepts the file.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseCompose, withDefaults, workloadViolations } from "@persys/schema";
import { parseSpecText } from "@persys/sdk";
import { describe, expect, it } from "vitest";

const dir = join(import.meta.dirname, "..", "..", "examples", "compose-stack");

describe("examples/compose-stack", () => {
  it("is a valid Persys workload whose resources are the sum of its services", () => {
    const [doc] = parseSpecText(readFileSync(join(dir, "workload.yaml"), "utf8"), "workload.yaml");
    const workload = withDefaults(doc!.workload);
    expect(workloadViolations(workload)).toEqual([]);
    expect(workload.resources).toEqual({ cpuMillicores: 750, memoryMib: 96, diskGib: 0 });
    const spec = workload.spec?.$case === "compose" ? workload.spec.value : undefined;
    expect(spec?.source?.$case === "inlineYaml" ? spec.source.value : "").toBe(
      readFileSync(join(dir, "compose.yaml"), "utf8"),
    );
    const project = parseCompose({ file: "compose.yaml", content: readFileSync(join(dir, "compose.yaml"), "utf8") });
    expect(project.services.map((s) => s.name)).toEqual(["db", "seed", "web"]);
    expect(project.disabledServices).toEqual(["debug"]);
  });

  it("is accepted by Docker Compose itself", async () => {
    await promisify(execFile)("docker-compose", ["-f", join(dir, "compose.yaml"), "config", "-q"]);
  });
});
