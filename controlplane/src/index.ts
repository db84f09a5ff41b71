// Event store: events, counters and usage series (Redis or embedded).

// The control plane server: stores, cluster state, API services, node registry, reconciler.
export * from "./api/persys-api.js";
export * from "./config/server-config.js";
export * from "./events/index.js";
// Leader election on the state store (etcd or embedded).
export * from "./leader/leader-election.js";
export { NODE_ID_HEADER } from "./reconciler/agent-pool.js";
export { ControlPlane, type ControlPlaneOptions, PERSYS_VERSION } from "./server/control-plane.js";
// State store: desired state, assignments, node records and leases (etcd or embedded SQLite).
export * from "./state/index.js";
