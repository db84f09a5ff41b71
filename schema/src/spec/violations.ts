import type { FieldViolation } from "../errors/persys-error.js";

/** Collects field violations under a path prefix; validators push into it and never throw. */
export class Violations {
  /** @param list shared by a validator and all its children, so every violation lands in one place */
  constructor(
    private readonly prefix = "",
    readonly list: FieldViolation[] = [],
  ) {}

  at(segment: string | number): Violations {
    const path =
      typeof segment === "number" ? `${this.prefix}[${segment}]` : this.prefix ? `${this.prefix}.${segment}` : segment;
    return new Violations(path, this.list);
  }

  add(reason: string, segment?: string | number): void {
    const path = segment === undefined ? this.prefix : this.at(segment).prefix;
    this.list.push({ path: path || "(root)", reason });
  }

  get path(): string {
    return this.prefix;
  }
}

const dnsLabel = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const labelName = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A DNS-1123 label (workload ids, volume names): 1–63 of [a-z0-9-], starting with a letter. */
export function checkDnsLabel(v: Violations, value: string, segment: string, what = "name"): void {
  if (!value) v.add("is required", segment);
  else if (value.length > 63) v.add(`${what} must be at most 63 characters`, segment);
  else if (!dnsLabel.test(value)) {
    v.add(`${what} must be a DNS-1123 label: lowercase letters, digits and '-', starting with a letter`, segment);
  }
}

/** A label key in the Kubernetes form `[prefix/]name`. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (!name) return "label key must not be empty";
  if (name.length > 63 || !labelName.test(name)) {
    return `label key "${key}" must be at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric`;
  }
  if (prefix !== undefined && (prefix.length > 253 || !dnsSubdomain.test(prefix))) {
    return `label key prefix "${prefix}" must be a DNS subdomain`;
  }
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > 63 || !labelName.test(value)) {
    return `label value "${value}" must be at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric`;
  }
  return undefined;
}

export function checkLabels(v: Violations, labels: Record<string, string>, segment: string): void {
  for (const [key, value] of Object.entries(labels)) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem) v.at(segment).add(problem, key);
  }
}

export function checkRange(v: Violations, value: number, segment: string, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) v.add(`must be an integer in ${min}..${max}`, segment);
}

export function checkAbsolutePath(v: Violations, value: string, segment: string): void {
  if (!value) v.add("is required", segment);
  else if (!value.startsWith("/")) v.add(`must be an absolute path, got "${value}"`, segment);
  else if (value.split("/").includes("..")) v.add("must not contain '..'", segment);
}
