import { api, parseCompose } from "@persys/schema";
import { describe, expect, it } from "vitest";
import type { ContainerSnapshot } from "../docker/container-state.js";
import { serviceStatus } from "./service-status.js";

const project = parseCompose({
  file: "compose.yaml",
  content: "services:\n  job: { image: a }\n  web: { image: b, restart: always, deploy: { replicas: 2 } }\n",
});
const job = project.services.find((s) => s.name === "job")!;
const web = project.services.find((s) => s.name === "web")!;

const container = (over: Partial<ContainerSnapshot>): ContainerSnapshot => ({
  id: "c1",
  name: "p-x-1",
  labels: {},
  status: "running",
  running: true,
  restarting: false,
  oomKilled: false,
  exitCode: 0,
  error: "",
  health: "none",
  healthOutput: "",
  failingStreak: 0,
  startedAt: new Date(0),
  restartCount: 0,
  memoryLimitBytes: 0,
  ports: [],
  ...over,
});

describe("serviceStatus", () => {
  it.each([
    {
      name: "every container running",
      service: web,
      containers: [container({}), container({ name: "p-web-2" })],
      state: "RUNNING",
    },
    { name: "one of two containers", service: web, containers: [container({})], state: "STARTING" },
    {
      name: "a one-shot that exited 0",
      service: job,
      containers: [container({ running: false, status: "exited", exitCode: 0 })],
      state: "RUNNING",
    },
    {
      name: "a one-shot that exited 3",
      service: job,
      containers: [container({ name: "p-job-1", running: false, status: "exited", exitCode: 3 })],
      state: "FAILED",
      reason: { code: "CONTAINER_EXITED", message: "service job: container p-job-1 exited with code 3" },
    },
    {
      name: "an unhealthy container",
      service: web,
      containers: [container({ name: "p-web-1", health: "unhealthy", healthOutput: "no\n" }), container({})],
      state: "FAILED",
      reason: { code: "UNHEALTHY", message: "service web: container p-web-1 is unhealthy: no" },
    },
    {
      name: "a container still starting its healthcheck",
      service: web,
      containers: [container({ health: "starting" }), container({})],
      state: "STARTING",
    },
  ])("$name → $state", ({ service, containers, state, reason }) => {
    const r = serviceStatus({ service, hash: "h", containers });
    expect(r.state).toBe(state);
    if (reason) expect(r.reason).toMatchObject(reason);
    else expect(r.reason).toBeUndefined();
    expect(r.status).toMatchObject({
      name: service.name,
      desiredReplicas: service.replicas,
      state: api.ReplicaState[`REPLICA_STATE_${state as "RUNNING"}`],
      configHash: "h",
    });
  });
});
