export * from "./error-registry.js";
export * from "./grpc-error-codec.js";
export * from "./persys-error.js";
