export * from "./config-leaves.js";
export * from "./load-config.js";
