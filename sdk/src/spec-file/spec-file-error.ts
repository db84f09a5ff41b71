import { PersysError } from "@persys/schema";

/** A place in a spec file; lines and columns count from 1. */
export interface SpecLocation {
  /** The file as given (`-` or `<stdin>` for standard input). */
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** One problem in a spec file: where, which field (API path, e.g. `container.ports[0].hostPort`), and why. */
export interface SpecProblem extends SpecLocation {
  /** Field path in lowerCamelCase JSON names; `(document)` for the document as a whole. */
  readonly path: string;
  readonly reason: string;
  /** 0-based index of the YAML document in its file. */
  readonly document: number;
}

const brand = Symbol.for("persys.sdk.spec-file-error");

function ordered(problems: readonly SpecProblem[]): SpecProblem[] {
  const files = [...new Set(problems.map((p) => p.file))];
  return [...problems].sort(
    (a, b) => files.indexOf(a.file) - files.indexOf(b.file) || a.line - b.line || a.column - b.column,
  );
}

/** `web.yaml:7:5: container.imagee: unknown field (did you mean image?)` */
export function formatProblem(p: SpecProblem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.path}: ${p.reason}`;
}

/**
 * Spec files that cannot be applied: every problem found, each naming the file, line, column and
 * field. Code INVALID_SPEC (never retryable); the message has one line per problem. `details` carry
 * the field paths with the location appended to the reason. `instanceof` works across two loaded
 * copies of the SDK, and every SpecFileError is also a `PersysError`.
 */
export class SpecFileError extends PersysError {
  /** Every problem found, in file and line order. */
  readonly problems: readonly SpecProblem[];

  /** @param problems at least one; they are ordered by file (first appearance), line and column */
  constructor(problems: readonly SpecProblem[]) {
    problems = ordered(problems);
    super("INVALID_SPEC", problems.map(formatProblem).join("\n"), {
      details: problems.map((p) => ({ path: p.path, reason: `${p.reason} (${p.file}:${p.line}:${p.column})` })),
    });
    this.name = "SpecFileError";
    this.problems = problems;
    Object.defineProperty(this, brand, { value: true });
  }

  /** Recognises a SpecFileError from any copy of the SDK. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}
