export * from "./client-config-file.js";
export * from "./config-leaves.js";
export * from "./load-config.js";
