import type { FieldViolation } from "@persys/schema";
import { closestName } from "../spec-file/closest-name.js";

/**
 * Reports keys of a builder input that the builder does not know (a typo from plain JavaScript, or
 * an `as` cast in TypeScript), with the closest known name as a hint.
 */
export function checkKeys(input: object, known: readonly string[], path: string, violations: FieldViolation[]): void {
  for (const key of Object.keys(input)) {
    if (known.includes(key) || (input as Record<string, unknown>)[key] === undefined) continue;
    const hint = closestName(key, known);
    violations.push({
      path: path ? `${path}.${key}` : key,
      reason: `unknown field${hint ? ` (did you mean ${hint}?)` : ""}`,
    });
  }
}
