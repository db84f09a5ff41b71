import type { Logger } from "pino";
import type { AgentMetrics } from "../metrics/agent-metrics.js";
import type { ObservedReason, ReplicaStateName } from "../runtimes/docker/container-state.js";
import type { ReplicaStore } from "../state/replica-store.js";
import type { ActionLog } from "./action-log.js";
import type { DesiredReplica } from "./desired-replica.js";
import type { ReplicaEntry } from "./replica-entry.js";

/** The workload kinds a node can run (`DesiredReplica["kind"]`). */
export type ReplicaKind = DesiredReplica["kind"];

/** A replica's typed reason, with when the agent retries by itself. */
export type ObservedReplicaReason = ObservedReason & { readonly nextRetryAt?: Date };

/**
 * What the {@link ReplicaManager} gives every driver: the shared durable store, action log and
 * logger, and the only ways a driver changes what the control plane sees of a replica.
 */
export interface ReplicaDriverContext {
  readonly nodeId: string;
  readonly store: ReplicaStore;
  readonly actions: ActionLog;
  readonly logger: Logger;
  readonly metrics?: AgentMetrics | undefined;
  readonly clock: () => number;
  /** Records a state and reason (none: cleared); reports soon when anything reported changed. */
  set(e: ReplicaEntry, state: ReplicaStateName, reason?: ObservedReplicaReason): void;
  /** The replica's runtime objects are gone after a delete: forget it. */
  gone(e: ReplicaEntry): void;
  /** The replica of a workload index on this node, if any (to route runtime events). */
  find(workloadId: string, index: number): ReplicaEntry | undefined;
  /** Runs work on the replica's serial queue (after any apply/delete queued before); errors are logged. */
  enqueue(e: ReplicaEntry, work: () => Promise<void>): void;
}

/**
 * The runtime of one workload kind (container, compose, vm). The manager owns desired state,
 * validation, idempotency by revision and the per-replica queue; a driver only makes the node match
 * a desired replica of its kind, always on that replica's queue (never two calls at once for one
 * replica).
 *
 * Contract: `converge` and `teardown` never throw — a failure becomes the replica's reason through
 * `ctx.set` (and `teardown` retries itself with backoff until it succeeds or the replica is applied
 * again). Both are idempotent: calling them again with nothing changed does nothing to the runtime.
 */
export interface ReplicaDriver {
  readonly kind: ReplicaKind;
  /** Undefined while the runtime can take work; else why not (applies of this kind are refused with it). */
  notReady(): ObservedReason | undefined;
  /**
   * Brings the replica's runtime objects to its desired revision and state. `apply`: after an
   * ApplyWorkload; `adopt`: after an agent start or a runtime reconnect — objects found at the
   * revision are kept as they are, never recreated.
   */
  converge(e: ReplicaEntry, mode: "apply" | "adopt"): Promise<void>;
  /**
   * Restarts what runs inside the replica's runtime object, keeping the object (a VM guest reboot,
   * `docker restart`), after an apply that only asked for a reboot (`isRebootOnly`). When the
   * reboot is done it sets `observed.observedRevision` to the desired revision (the control plane
   * reads that as "rebooted"). A replica that is not running is converged instead. Never throws.
   * Kinds without it are recreated.
   */
  reboot?(e: ReplicaEntry): Promise<void>;
  /** Removes every runtime object of the (deleted) replica, then calls `ctx.gone(e)`. */
  teardown(e: ReplicaEntry): Promise<void>;
  /** Stops the driver's own timers and streams (runtime objects keep running). */
  close?(): Promise<void> | void;
}

/** Builds a driver once the manager (its context) exists. */
export type ReplicaDriverFactory = (ctx: ReplicaDriverContext) => ReplicaDriver;
