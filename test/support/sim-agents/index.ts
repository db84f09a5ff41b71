/**
 * Simulated agents: nodes that speak the real Persys/Go wire protocol (register and heartbeat on
 * `persys.control.v1.AgentControl`, serve `persys.agent.v1.AgentService`) but run no containers.
 * For control-plane integration tests (one node at a time, with failure injection) and load runs
 * (thousands of nodes behind one shared endpoint).
 *
 * ```ts
 * import { SimulatedNode, startFleet, simulatedNodes } from "../support/sim-agents/index.js";
 *
 * const node = await SimulatedNode.start({
 *   node: { id: "n1", labels: { zone: "a" }, capabilities: ["kvm"], capacity: { cpuMillicores: 4000, memoryMiB: 8192, diskGiB: 100 } },
 *   controlPlane: "127.0.0.1:7443",
 *   heartbeatIntervalMs: 500,
 * });
 * node.failNextApply("web", { code: "IMAGE_NOT_FOUND", message: "nginx:nope not found" });
 * node.pauseHeartbeats(); // NotReady, replicas keep running
 * await node.stop();      // dead node; node.start() brings it back with its stale copies
 *
 * // 5,000 nodes behind one AgentService port, routed by the `persys-node-id` header.
 * const fleet = await startFleet({
 *   controlPlane: "127.0.0.1:7443",
 *   nodes: simulatedNodes({ count: 5000, seed: 7 }),
 *   heartbeatIntervalMs: 5000,
 *   endpointMode: "shared",
 * });
 * ```
 *
 * Routing on a shared endpoint: every AgentService call must carry the gRPC metadata header
 * `persys-node-id: <node id>` (`nodeIdHeader`); without it the call answers INVALID_ARGUMENT, for an
 * unknown or stopped node UNAVAILABLE. A node's own endpoint ignores the header.
 *
 * Replica identity on a node: `(workload id, replica index)` from the `persys` ReplicaAssignment, or
 * `(id, 0)` for a Go request. The request `id` is kept as the replica's "agent id": Go heartbeat
 * statuses and agent WorkloadStatus use it, and DeleteWorkload/GetWorkloadStatus look it up first
 * (then fall back to all replicas / the lowest index of the workload with that id).
 *
 * Measured (2 shared cores, load average 2–4 from other work; `fleet-bench.ts`, fake control plane in
 * a child process): 5,000 nodes in shared mode at one heartbeat per 5 s hold 1,000 heartbeats/s with
 * each node's largest gap p99 5.5 s, about 0.5 core and 300 MiB RSS; with 20,000 replicas running,
 * 0.6 core and 420 MiB. Serving ApplyWorkload costs about 0.35 ms of this process's CPU per call and
 * a prompt report one more heartbeat per apply: at 500 applies/s the process used 0.9 core. 10,000
 * nodes at 5 s is the edge (1,810 of 2,000 heartbeats/s, 0.76 core, loop delay p99 370 ms).
 */
export type { ActionStatus, ActionType } from "./action-log.js";
export { type AgentCaller, connectAgent } from "./agent-caller.js";
export { agentServiceImplementation, listenAgentService, NodeRouter, nodeIdHeader } from "./agent-service.js";
export { type AssignmentInput, assignmentRequest } from "./apply-request.js";
export type { ParsedAssignment, RestartRule, SimPort } from "./assignment.js";
export { fromSchedulerNode, type SimulatedNodesShape, simulatedNodes } from "./cluster-nodes.js";
export type { SessionStats } from "./control-session.js";
export { FakeAgentControl, type FakeAgentControlOptions, type FakeNodeRecord } from "./fake-agent-control.js";
export { heartbeatRequest } from "./heartbeat-report.js";
export { AgentCallError, type AgentCounters, NodeAgent, type StoppedReplica } from "./node-agent.js";
export {
  registerNodeRequest,
  type SimNodeDescription,
  type SimResources,
  type SimWorkloadKind,
  simAgentVersion,
} from "./node-description.js";
export type {
  ApplyMatcher,
  DeletedReplica,
  InjectedFailure,
  ReplicaStateName,
  SimReason,
  SimReplica,
} from "./replica-runtime.js";
export {
  type EndpointMode,
  type FleetOptions,
  type FleetStats,
  SimulatedFleet,
  startFleet,
} from "./simulated-fleet.js";
export {
  type NodeTransport,
  SimulatedNode,
  type SimulatedNodeEvents,
  type SimulatedNodeOptions,
} from "./simulated-node.js";
export { eventually, waitUntil } from "./wait.js";
