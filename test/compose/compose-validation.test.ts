// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Compose interpolation syntax (${VAR}) inside plain strings
/**
 * What the control plane refuses or cannot place: bad compose files are typed INVALID_SPEC errors
 * naming the field inside the file (nothing reaches a node), and a stack whose summed resources fit
 * no single node stays pending with a diagnosis that says it is placed whole.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DockerHarness, startDockerHarness, until } from "../agent/support/agent-harness.js";
import { stackContainers } from "./support/compose-fixtures.js";

let h: DockerHarness;
beforeAll(async () => {
  h = await startDockerHarness();
  await h.addAgent("node");
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const put = (id: string, inlineYaml: string, env: Record<string, string> = {}) =>
  h.rest("PUT", `/v1/workloads/${id}`, { id, kind: "WORKLOAD_KIND_COMPOSE", compose: { inlineYaml, env } });

const cases: [string, string, { path: string; reason: RegExp }][] = [
  [
    "unknown service in depends_on",
    "services:\n  web:\n    image: persys-test/web:1\n    depends_on: [db]\n",
    { path: "compose.inlineYaml.services.web.depends_on.db", reason: /undefined service "db"/ },
  ],
  [
    "dependency cycle",
    "services:\n  a: { image: persys-test/busybox:1, depends_on: [b] }\n  b: { image: persys-test/busybox:1, depends_on: [a] }\n",
    { path: "compose.inlineYaml.services.b.depends_on.a", reason: /dependency cycle: a -> b -> a/ },
  ],
  [
    "bad port",
    "services:\n  web:\n    image: persys-test/web:1\n    ports: ['8080:80800']\n",
    { path: "compose.inlineYaml.services.web.ports[0]", reason: /not a port mapping/ },
  ],
  [
    "undefined variable without default",
    "services:\n  web:\n    image: persys-test/web:${TAG}\n",
    { path: "compose.inlineYaml.services.web.image", reason: /variable TAG is not set and has no default/ },
  ],
  [
    "unsupported key",
    "services:\n  web:\n    image: persys-test/web:1\n    secrets: [token]\n",
    { path: "compose.inlineYaml.services.web.secrets", reason: /unsupported key "secrets"/ },
  ],
];

describe("compose files the control plane refuses", () => {
  it.each(cases)("%s → INVALID_SPEC with the path", async (name, yaml, expected) => {
    const id = `bad-${name.split(" ")[0]}-${h.id}`;
    const response = await put(id, yaml);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: "INVALID_SPEC", retryable: false });
    expect(response.body.message).toContain("inline compose file");
    expect(response.body.details).toContainEqual({
      path: expected.path,
      reason: expect.stringMatching(expected.reason),
    });
    expect((await h.rest("GET", `/v1/workloads/${id}`)).status).toBe(404);
  });

  it("accepts the same file once the variable is given", async () => {
    const id = `tagged-${h.id}`;
    const response = await put(id, "services:\n  web:\n    image: persys-test/web:${TAG}\n", { TAG: "1" });
    expect(response.status).toBe(201);
    expect((await h.rest("DELETE", `/v1/workloads/${id}`)).status).toBeLessThan(300);
  });
});

describe("keys Persys ignores", () => {
  it("accepts the file and records a warning event naming each ignored key", async () => {
    const id = `ignored-${h.id}`;
    const yaml = "version: '3.9'\nservices:\n  web:\n    image: persys-test/web:1\n    container_name: my-web\n";
    expect((await put(id, yaml)).status).toBe(201);
    const event = await until("warning recorded", async () => {
      const got = await h.rest("GET", `/v1/events?workloadId=${id}`);
      return got.body.events?.find((e: any) => e.type === "ComposeKeysIgnored");
    });
    expect(event.severity).toBe("EVENT_SEVERITY_WARNING");
    expect(event.message).toContain("version: ignored: the top-level version is obsolete");
    expect(event.message).toContain("services.web.container_name: ignored: Persys names containers");
    expect((await h.rest("DELETE", `/v1/workloads/${id}`)).status).toBeLessThan(300);
  });
});

describe("a stack that fits no node", () => {
  it("stays pending with a diagnosis naming the stack and the memory it needs", async () => {
    const id = `huge-${h.id}`;
    const yaml = `
services:
  db:
    image: persys-test/busybox:1
    deploy: { resources: { reservations: { memory: 60g } } }
  cache:
    image: persys-test/busybox:1
    deploy: { replicas: 2, resources: { reservations: { memory: 30g } } }
`;
    const response = await put(id, yaml);
    expect(response.status).toBe(201);
    expect(response.body.workload.resources).toMatchObject({ memoryMib: 120 * 1024 });
    const pending = await until("diagnosis recorded", async () => {
      const r = await h.replica(id);
      return r?.state === "REPLICA_STATE_PENDING" && r.reason?.code === "UNSCHEDULABLE" ? r : undefined;
    });
    expect(pending.reason.message).toMatch(
      /^compose stack of 2 services \(db, cache\) on one node, needing 0m CPU, 122880 MiB memory: 0\/1 nodes are available: 1 insufficient memory \(need 122880 MiB/,
    );
    const explained = await h.rest("GET", `/v1/workloads/${id}`);
    expect(explained.body.workload.status.state).toBe("WORKLOAD_STATE_PENDING");
    expect(await stackContainers(`${id}-0`)).toEqual({});
    expect((await h.rest("DELETE", `/v1/workloads/${id}`)).status).toBeLessThan(300);
  });
});
