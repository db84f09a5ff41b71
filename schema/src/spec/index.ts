export * from "./apply-limits.js";
export * from "./secret-refs.js";
export * from "./validate-workload.js";
export { labelKeyProblem, labelValueProblem } from "./violations.js";
export * from "./workload-defaults.js";
export * from "./workload-revision.js";
