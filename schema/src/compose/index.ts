export * from "./compose-hash.js";
export type * from "./compose-model.js";
export {
  type ComposeParseResult,
  type ComposeSource,
  composeError,
  parseCompose,
  readCompose,
} from "./compose-parser.js";
export * from "./compose-resources.js";
export { parseDotenv } from "./dotenv.js";
export { InterpolationError, interpolate } from "./interpolation.js";
