/**
 * A Go scheduler applying a compose workload to the agent with only the Go fields
 * (`persys.agent.v1.ComposeSpec`: project name, base64 compose file, env): the stack runs as one
 * Compose project, its status is Running in the Go view, and delete removes it.
 */
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { agent } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "../agent/support/agent-harness.js";
import { docker } from "../agent/support/docker-fixtures.js";
import { cleanupProjects, stackContainers } from "./support/compose-fixtures.js";

let h: DockerHarness | undefined;
let client: agent.AgentServiceClient | undefined;
const projects: string[] = [];
afterEach(async () => {
  client?.close();
  client = undefined;
  await h?.close();
  h = undefined;
  await cleanupProjects(projects.splice(0));
});

function rpc<T>(run: (md: Metadata, cb: (e: ServiceError | null, r: T) => void) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => run(new Metadata(), (e, r) => (e ? reject(e) : resolve(r))));
}

const yaml = `
services:
  app:
    image: persys-test/busybox:1
    environment: { FROM: "\${FROM:-nowhere}" }
    stop_grace_period: 1s
`;

describe("a Go scheduler applying a compose workload", () => {
  it("runs the stack from the Go ComposeSpec and deletes it", async () => {
    h = await startDockerHarness();
    const node = await h.addAgent("go");
    client = new agent.AgentServiceClient(node.endpoint, credentials.createInsecure());
    const c = client;
    const id = `gostack-${h.id}`;
    projects.push(id);
    const applied = await rpc<agent.ApplyWorkloadResponse>((md, cb) =>
      c.applyWorkload(
        agent.ApplyWorkloadRequest.fromPartial({
          id,
          type: agent.WorkloadType.WORKLOAD_TYPE_COMPOSE,
          revisionId: "go-rev-1",
          desiredState: agent.DesiredState.DESIRED_STATE_RUNNING,
          spec: {
            spec: {
              $case: "compose",
              value: { projectName: id, composeYaml: Buffer.from(yaml).toString("base64"), env: { FROM: "go" } },
            },
          },
        }),
        md,
        cb,
      ),
    );
    expect(applied).toMatchObject({ applied: true });
    await until(
      "Go status Running",
      async () => {
        const got = await rpc<agent.GetWorkloadStatusResponse>((md, cb) => c.getWorkloadStatus({ id }, md, cb));
        return got.status?.actualState === agent.ActualState.ACTUAL_STATE_RUNNING;
      },
      30_000,
    );
    const app = (await stackContainers(id)).app![0]!;
    expect((await docker.getContainer(app.id).inspect()).Config.Env).toContain("FROM=go");

    const bad = await rpc<agent.ApplyWorkloadResponse>((md, cb) =>
      c.applyWorkload(
        agent.ApplyWorkloadRequest.fromPartial({
          id: `${id}-bad`,
          type: agent.WorkloadType.WORKLOAD_TYPE_COMPOSE,
          spec: {
            spec: { $case: "compose", value: { composeYaml: "services:\n  a: { image: x, depends_on: [b] }\n" } },
          },
        }),
        md,
        cb,
      ),
    );
    expect(bad.applied).toBe(false);
    expect(bad.message).toContain(
      'spec.compose.compose_yaml.services.a.depends_on.b: depends on undefined service "b"',
    );

    expect((await rpc<agent.DeleteWorkloadResponse>((md, cb) => c.deleteWorkload({ id }, md, cb))).success).toBe(true);
    await until("stack removed", async () => Object.keys(await stackContainers(id)).length === 0, 30_000);
  }, 90_000);
});
