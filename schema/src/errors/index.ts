export * from "./error-registry.js";
export * from "./persys-error.js";
