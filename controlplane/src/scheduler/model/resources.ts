/**
 * Resource amounts the scheduler reasons about. All amounts are non-negative integers in fixed units
 * (millicores, MiB, GiB), so sums and differences are exact and a reservation released gives back
 * exactly what it took.
 */
export interface Resources {
  readonly cpuMillicores: number;
  readonly memoryMiB: number;
  readonly diskGiB: number;
}

/** A resource dimension, as named in diagnoses. */
export type Dimension = "cpu" | "memory" | "disk";

/** The unit each dimension is expressed in, as shown to people. */
export const dimensionUnit: Readonly<Record<Dimension, string>> = {
  cpu: "millicores",
  memory: "MiB",
  disk: "GiB",
};

/** Every dimension, in the order diagnoses list them. */
export const dimensions: readonly Dimension[] = ["cpu", "memory", "disk"];

/** No resources at all. */
export const zeroResources: Resources = Object.freeze({ cpuMillicores: 0, memoryMiB: 0, diskGiB: 0 });

/** The amount of one dimension in `r`. */
export function amountOf(r: Resources, dimension: Dimension): number {
  switch (dimension) {
    case "cpu":
      return r.cpuMillicores;
    case "memory":
      return r.memoryMiB;
    case "disk":
      return r.diskGiB;
  }
}

/** Field violations for a resources object at `path`: each amount must be a non-negative safe integer. */
export function resourceViolations(r: Resources | undefined, path: string): { path: string; reason: string }[] {
  if (r === undefined || r === null || typeof r !== "object") return [{ path, reason: "is required" }];
  const out: { path: string; reason: string }[] = [];
  for (const field of ["cpuMillicores", "memoryMiB", "diskGiB"] as const) {
    const value = r[field];
    if (!Number.isSafeInteger(value) || value < 0) {
      out.push({ path: `${path}.${field}`, reason: "must be a non-negative integer" });
    }
  }
  return out;
}
