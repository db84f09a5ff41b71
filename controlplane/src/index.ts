// Event store: events, counters and usage series (Redis or embedded).
export * from "./events/index.js";
// Leader election on the state store (etcd or embedded).
export * from "./leader/leader-election.js";
// State store: desired state, assignments, node records and leases (etcd or embedded SQLite).
export * from "./state/index.js";
