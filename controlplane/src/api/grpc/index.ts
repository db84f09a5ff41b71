// gRPC transport: persys.api.v1 and persys.control.v1.AgentControl over the core's interfaces,
// with health checking and server reflection.
export { callCredentials, type GrpcIdentify } from "./call-context.js";
export { GrpcHealth } from "./grpc-health.js";
export { addReflection, persysPackageDefinition } from "./grpc-reflection.js";
export { type GrpcServerOptions, type RunningGrpcServer, startGrpcServer } from "./grpc-server.js";
export { jsonSchemaDir, protoDir, schemaPackageDir } from "./schema-package.js";
