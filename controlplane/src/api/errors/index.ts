// Wire mapping of errors: PersysError ⇄ gRPC status with the `persys-error-bin` trailer, PersysError →
// HTTP status and the one error body, JSON Schema failures → field violations.
export * from "./grpc-error.js";
export * from "./http-error.js";
export * from "./validation-details.js";
export * from "./wire-error.js";
