import type { ObservedReason } from "../runtimes/docker/container-state.js";
import type { DesiredReplica } from "./desired-replica.js";
import type { ReplicaSecretValues } from "./replica-secrets.js";
import type { ObservedReplica } from "./replica-wire.js";

/**
 * One replica the agent holds: desired (durable) and observed (memory) state, and the serial queue
 * its runtime work runs on, so an apply, a delete and the Docker events of one replica never
 * interleave. Different replicas run concurrently.
 */
export class ReplicaEntry {
  observed: ObservedReplica;
  /** The typed failure of the last runtime attempt; wins over the container state until the next one. */
  lastError: ObservedReason | undefined;
  /** The next converge removes the container and creates it again (re-apply of a failed replica). */
  recreate = false;
  /** Restarts the agent made at the current container. */
  agentRestarts: number;
  /** Delay of the last agent restart (Docker-style backoff). */
  restartDelayMs = 0;
  restartTimer: NodeJS.Timeout | undefined;
  /**
   * Created by an apply on this run with no container seen yet: the first converge creates without
   * looking for an existing container by labels (a leftover with the same name is still handled).
   */
  fresh = false;
  /** When the current apply was accepted (for the converge-time histogram). */
  appliedAt = 0;
  /**
   * The replica's secret values, from the last apply: memory only (the store keeps references), so
   * after an agent restart they are undefined until the control plane pushes again.
   */
  secrets: ReplicaSecretValues | undefined;
  /** Fingerprint of the state last reported, to report only changes. */
  reported = "";
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(
    public desired: DesiredReplica,
    now: Date,
    agentRestarts = 0,
  ) {
    this.agentRestarts = agentRestarts;
    this.observed = {
      state: desired.desired === "stopped" ? "STOPPING" : "STARTING",
      observedRevision: desired.revision,
      restartCount: 0,
      lastTransitionAt: now,
      ports: [],
      cpuMillicores: 0,
      memoryBytes: 0,
      createdAt: now,
    };
  }

  /** Whether runtime work is queued or running for this replica. */
  get busy(): boolean {
    return this.queued > 0;
  }

  /** Runs `work` after everything queued before it; errors are passed to `onError`, never rethrown. */
  enqueue(work: () => Promise<void>, onError: (error: unknown) => void): Promise<void> {
    this.queued++;
    const next = this.chain.then(work).catch(onError);
    this.chain = next.finally(() => {
      this.queued--;
    });
    return this.chain;
  }

  /** Resolves when the queue is empty. */
  async idle(): Promise<void> {
    while (this.queued > 0) await this.chain;
  }

  /** Cancels a pending agent restart. */
  cancelRestart(): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }
}
