/**
 * `@persys/schema`: the contracts every Persys package shares.
 *
 * ```ts
 * import { PersysError, api, control, agent } from "@persys/schema";
 * throw new PersysError("NOT_FOUND", "workload web not found");
 *
 * const workload = api.Workload.fromPartial({ id: "web", kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER });
 * const bytes = api.Workload.encode(workload).finish();
 * ```
 *
 * The generated gRPC modules are namespaced because the packages share message names:
 * - `api` — `persys.api.v1`, the public API (WorkloadService, NodeService, ClusterService, EventService);
 * - `control` — `persys.control.v1`, the Go scheduler's AgentControl contract (agents register here);
 * - `agent` — `persys.agent.v1`, the Go compute-agent's AgentService contract;
 * - `heartbeat` — `persys.heartbeat.v1`, Persys agents' heartbeats over one stream (beside AgentControl);
 * - `command` — `persys.command.v1`, the control plane's pushes to Persys agents over one stream (beside AgentService).
 */
export * from "./compose/index.js";
export * from "./config/index.js";
export * from "./errors/index.js";
export * as agent from "./gen/index.persys.agent.v1.js";
export * as api from "./gen/index.persys.api.v1.js";
export * as command from "./gen/index.persys.command.v1.js";
export * as control from "./gen/index.persys.control.v1.js";
export * as heartbeat from "./gen/index.persys.heartbeat.v1.js";
export * from "./spec/index.js";
export * from "./tls/ca-pin.js";
export * from "./tls/reloadable-certificates.js";
export * from "./wire/agent-command-server.js";
export * from "./wire/heartbeat-channel.js";
