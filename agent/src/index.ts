/**
 * `@persys/agent`: the Persys node agent. It registers the node with the control plane
 * (`persys.control.v1.AgentControl`), heartbeats with usage and per-replica reports, serves
 * `persys.agent.v1.AgentService` (wire-compatible with the Go compute-agent) and
 * `persys.api.v1.NodeLogService`, and runs replicas as Docker containers with durable local state.
 *
 * ```ts
 * import { loadAgentConfig, NodeAgent } from "@persys/agent";
 *
 * const config = loadAgentConfig({
 *   flags: { "node-id": "edge-1", "control-plane-endpoints": "127.0.0.1:7070", "state-dir": "/var/lib/persys-agent" },
 * });
 * const agent = await NodeAgent.start(config);
 * console.log(agent.endpoint, agent.metricsUrl);
 * await agent.close(); // containers keep running; the next start adopts them
 * ```
 *
 * The command line is `persys-agent` (agent/dist/cli/persys-agent.js).
 */
export {
  AGENT_ENV_PREFIX,
  type AgentConfig,
  agentConfigSchema,
  labelMap,
  loadAgentConfig,
} from "./config/agent-config.js";
export { AGENT_VERSION } from "./control/node-report.js";
export { NodeAgent, type NodeAgentOptions } from "./node-agent.js";
export type { ActionStatus, ActionType } from "./replicas/action-log.js";
export { type DesiredReplica, desiredReplicaFromRequest, replicaLabels } from "./replicas/desired-replica.js";
export { NODE_ID_HEADER } from "./server/agent-service.js";
