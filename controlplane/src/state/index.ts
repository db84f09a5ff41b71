/**
 * The state store: desired state, assignments, node records, leases and leader election, with etcd's
 * semantics, on etcd or embedded SQLite.
 *
 * ```ts
 * import { decodeJson, encodeJson, openStateStore } from "@persys/controlplane";
 * const store = await openStateStore({ kind: "etcd", endpoints: ["http://127.0.0.1:2379"], prefix: "/persys/" });
 * const { revision } = await store.put("workloads/web", encodeJson({ replicas: 2 }));
 * const watch = await store.watch("workloads/", {
 *   afterRevision: revision,
 *   onEvents: ({ events }) => events.forEach((e) => console.log(e.type, e.key)),
 * });
 * ```
 */
export { EmbeddedStateStore, type EmbeddedStateStoreOptions } from "./embedded/embedded-state-store.js";
export { EtcdStateStore, type EtcdStateStoreOptions } from "./etcd/etcd-state-store.js";
export {
  type EmbeddedStateStoreConfig,
  type EtcdStateStoreConfig,
  openStateStore,
  type StateStoreConfig,
} from "./open-state-store.js";
export type {
  Compare,
  CompareOp,
  DeleteOptions,
  DeleteResult,
  KeyValue,
  LeaseGrant,
  LeaseId,
  LeaseKeepAlive,
  LeaseStatus,
  PutOptions,
  PutResult,
  RangeOptions,
  RangeResult,
  Revision,
  RevokeResult,
  StateStore,
  TxnOp,
  TxnOpResult,
  TxnRequest,
  TxnResult,
  Watch,
  WatchBatch,
  WatchEvent,
  WatchOptions,
} from "./state-store.js";
export { stateStoreLimits } from "./state-store-arguments.js";
export { decodeJson, decodeText, encodeJson, encodeText } from "./value-codec.js";
