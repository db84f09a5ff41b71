// Event store: events, counters and usage series (Redis or embedded).
export * from "./events/index.js";
