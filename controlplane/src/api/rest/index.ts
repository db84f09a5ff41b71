// REST transport: /v1 over PersysApi (JSON Schema validated, OpenAPI at /v1/openapi.json), the Go
// gateway's compat routes over AgentControlApi, and /healthz, /readyz, /metrics.
export { fromProtoJson, ProtoJsonError, toProtoNames } from "./compat/protojson.js";
export { type FieldInfo, loadSchemaCatalog, type SchemaCatalog } from "./json-schemas.js";
export { type RestIdentify, requestCredentials } from "./rest-context.js";
export { buildRestServer, type RestServerOptions, type RunningRestServer, startRestServer } from "./rest-server.js";
export { type V1Route, v1Routes } from "./v1-route-table.js";
