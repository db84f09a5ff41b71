import type { EventStoreHealth } from "./event-store.js";

/**
 * The current health of a store and the listeners told when it changes (state or reason). A
 * listener that throws is ignored: health reporting must never break the store.
 */
export class HealthSignal {
  private current: EventStoreHealth;
  private readonly listeners = new Set<(health: EventStoreHealth) => void>();

  constructor(initial: EventStoreHealth) {
    this.current = initial;
  }

  get(): EventStoreHealth {
    return this.current;
  }

  ok(): void {
    this.set({ state: "ok" });
  }

  degraded(reason: string): void {
    this.set({ state: "degraded", reason });
  }

  /** Adds a listener; returns its removal. */
  listen(listener: (health: EventStoreHealth) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(next: EventStoreHealth): void {
    const prev = this.current;
    if (
      prev.state === next.state &&
      (prev.state === "ok" || (next.state === "degraded" && prev.reason === next.reason))
    )
      return;
    this.current = next;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A failing listener must not break the store or the other listeners.
      }
    }
  }
}
