import type { Server } from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import type { ServerHealth } from "../persys-api.js";

/**
 * gRPC health checking (`grpc.health.v1.Health`) that follows `ServerHealth`: SERVING while the
 * process is live and ready, NOT_SERVING otherwise, for the overall server (`""`) and each service
 * name. Polls `health` every `intervalMs` (and on `refresh()`); watchers are told of every change.
 */
export class GrpcHealth {
  private readonly impl = new HealthImplementation();
  private timer: NodeJS.Timeout | undefined;
  private current: ServingStatus | undefined;

  constructor(
    private readonly health: ServerHealth,
    private readonly services: readonly string[],
    private readonly intervalMs = 1000,
  ) {
    this.refresh();
  }

  addToServer(server: Server): void {
    this.impl.addToServer(server);
  }

  /** Starts polling; idempotent. The timer does not keep the process alive. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  /** Reads `health` now and publishes the status if it changed. A throwing probe counts as not serving. */
  refresh(): ServingStatus {
    let next: ServingStatus;
    try {
      next = this.health.live() && this.health.ready().ready ? "SERVING" : "NOT_SERVING";
    } catch {
      next = "NOT_SERVING";
    }
    if (next !== this.current) {
      this.current = next;
      for (const name of ["", ...this.services]) this.impl.setStatus(name, next);
    }
    return next;
  }

  /** Stops polling and reports NOT_SERVING (for a graceful shutdown). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.current = "NOT_SERVING";
    for (const name of ["", ...this.services]) this.impl.setStatus(name, "NOT_SERVING");
  }
}
