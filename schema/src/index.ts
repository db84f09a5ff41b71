/**
 * `@persys/schema`: the contracts every Persys package shares.
 *
 * ```ts
 * import { PersysError } from "@persys/schema";
 * throw new PersysError("NOT_FOUND", "workload web not found");
 * ```
 */
export * from "./config/index.js";
export * from "./errors/index.js";
