import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { parseSpecText, type SpecDocument } from "./spec-document.js";
import { SpecFileError, type SpecProblem } from "./spec-file-error.js";

/** File endings read from a folder. */
export const SPEC_FILE_EXTENSIONS = [".yaml", ".yml", ".json"] as const;

/** Options of {@link readSpecFiles}. */
export interface ReadSpecFilesOptions {
  /** What `-` reads: the text, or a stream (default `process.stdin`). */
  readonly stdin?: string | NodeJS.ReadableStream | undefined;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** The files a path stands for: itself, or the spec files directly inside a folder (sorted, not recursive). */
function expand(path: string): string[] {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch (error) {
    throw new PersysError(
      "INVALID_ARGUMENT",
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      {
        details: [{ path: "file", reason: `${path} does not exist or cannot be read` }],
      },
    );
  }
  if (!stat.isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => SPEC_FILE_EXTENSIONS.some((ext) => name.endsWith(ext)))
    .sort()
    .map((name) => join(path, name));
}

/**
 * Reads workloads from spec files: each path is a file, a folder (its `.yaml`, `.yml` and `.json`
 * files, not recursive) or `-` for standard input; each file may hold several documents. Every file
 * is parsed before anything is reported, so one error lists the problems of all of them. A workload
 * id defined twice is a problem at its second definition.
 *
 * @throws SpecFileError with every problem (file, line, column, field), INVALID_SPEC.
 * @throws PersysError INVALID_ARGUMENT for a path that cannot be read, or when no document was found.
 */
export async function readSpecFiles(
  paths: readonly string[],
  options: ReadSpecFilesOptions = {},
): Promise<SpecDocument[]> {
  const problems: SpecProblem[] = [];
  const documents: SpecDocument[] = [];
  for (const path of paths) {
    const files = path === "-" ? ["-"] : expand(path);
    for (const file of files) {
      const text =
        file === "-"
          ? typeof options.stdin === "string"
            ? options.stdin
            : await readStream(options.stdin ?? process.stdin)
          : readFileSync(file, "utf8");
      try {
        documents.push(...parseSpecText(text, file === "-" ? "<stdin>" : file));
      } catch (error) {
        if (!(error instanceof SpecFileError)) throw error;
        problems.push(...error.problems);
      }
    }
  }
  const first = new Map<string, SpecDocument>();
  for (const doc of documents) {
    const earlier = first.get(doc.workload.id);
    if (earlier) {
      const where = earlier.locate("id");
      problems.push({
        ...doc.locate("id"),
        path: "id",
        reason: `workload ${doc.workload.id} is already defined at ${where.file}:${where.line}`,
        document: doc.document,
      });
    } else first.set(doc.workload.id, doc);
  }
  if (problems.length > 0) throw new SpecFileError(problems);
  if (documents.length === 0) {
    throw new PersysError("INVALID_ARGUMENT", `no workload documents in ${paths.join(", ")}`, {
      details: [{ path: "file", reason: "holds no documents" }],
    });
  }
  return documents;
}
