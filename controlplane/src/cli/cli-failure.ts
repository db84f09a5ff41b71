import { PersysError } from "@persys/schema";

/** Prints a failure the way every `persys` command does (message, then each field) and exits 1. */
export function fail(error: unknown): never {
  if (error instanceof PersysError) {
    console.error(`persys: ${error.message}`);
    for (const d of error.details) console.error(`  ${d.path}: ${d.reason}`);
  } else console.error(`persys: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
}
