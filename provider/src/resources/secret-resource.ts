/**
 * `persys:index:Secret`: a Persys secret (named key/value pairs that containers reference) as a
 * Pulumi resource, on `@persys/sdk`'s `client.secrets`.
 *
 * - check: `name` (autonamed like workloads) must be a DNS-1123 label, `data` a map of strings with
 *   valid keys and at most 1 MiB of values; failures name the field (`data["bad key"]`) and never
 *   echo a value. Valid inputs come back canonical: `{ name, data }` with the keys sorted.
 * - diff: a `name` change replaces the secret; a `data` change (per key: `data.password: UPDATE`)
 *   puts the new values in place.
 * - create refuses a secret that already exists (import it instead), then `put`s; update `put`s
 *   (the same data keeps the version, new data bumps it and rolls the replicas that use it).
 * - read: Persys never returns values, so `data` is kept from the state, restricted to the keys
 *   Persys holds; a key added outside Pulumi, or every key when the version moved on without
 *   Pulumi, reads as {@link NOT_READABLE}, so the next `up` sees the drift and puts the declared
 *   data again. A missing secret reads as `undefined` (refresh drops it).
 * - delete: `secrets.delete`; a secret already gone is done. Refused (SECRET_IN_USE) while a
 *   workload references it.
 *
 * `data` is marked secret in every response (the package schema says `"secret": true`), so Pulumi
 * encrypts it in the state even when the program passed plain strings.
 */
import { MAX_SECRET_BYTES, type PersysClient, PersysError, secretKeyProblem, secretNameProblem } from "@persys/sdk";
import { containsUnknown, type Props } from "../plugin/property-values.js";
import type { CheckFailure } from "../plugin/provider-server.js";
import type { InputsDiff, PropertyChange } from "./workload-diff.js";

/** The inputs a secret resource has. */
export const SECRET_INPUTS = ["name", "data"] as const;
/** Output-only properties of a secret resource. */
export const SECRET_OUTPUT_ONLY = ["keys", "version"] as const;
/** Properties that are always secret, in inputs and outputs. */
export const SECRET_PROPERTIES = ["data"] as const;

/** What `read` stores for a key whose value Persys holds but Pulumi cannot vouch for. */
export const NOT_READABLE = "<changed outside Pulumi>";

type SecretData = Record<string, string>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A data key in Pulumi's property path syntax: `data.password`, `data["tls.crt"]`. */
export function dataPath(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `data.${key}` : `data[${JSON.stringify(key)}]`;
}

const sorted = (data: SecretData): SecretData =>
  Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * Validates known inputs (the name already filled in) and returns their canonical form. Reasons
 * never contain a value.
 */
export function checkSecretInputs(inputs: Props): { inputs: Props; failures: CheckFailure[] } {
  const failures: CheckFailure[] = [];
  for (const key of Object.keys(inputs)) {
    if (!(SECRET_INPUTS as readonly string[]).includes(key)) failures.push({ property: key, reason: "unknown field" });
  }
  const { name, data } = inputs;
  if (typeof name !== "string") failures.push({ property: "name", reason: "must be a string" });
  else {
    const problem = secretNameProblem(name);
    if (problem) failures.push({ property: "name", reason: problem });
  }
  if (!isObject(data)) {
    failures.push({ property: "data", reason: data === undefined ? "is required" : "must be a map of strings" });
    return { inputs, failures };
  }
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    const problem = secretKeyProblem(key);
    if (problem) failures.push({ property: dataPath(key), reason: problem });
    if (typeof value !== "string") failures.push({ property: dataPath(key), reason: "must be a string" });
    else size += Buffer.byteLength(value, "utf8");
  }
  if (size > MAX_SECRET_BYTES) {
    failures.push({ property: "data", reason: `values total ${size} bytes; the limit is ${MAX_SECRET_BYTES} (1 MiB)` });
  }
  if (failures.length > 0) return { inputs, failures };
  return { inputs: { name, data: sorted(data as SecretData) }, failures };
}

/** The input part of stored properties (the output-only keys left out). */
export function secretInputPart(props: Props): Props {
  const inputs = { ...props };
  for (const key of SECRET_OUTPUT_ONLY) delete inputs[key];
  return inputs;
}

/** The diff from `olds` to `news` (inputs): `name` replaces, `data` updates in place, per key. */
export function diffSecretInputs(olds: Props, news: Props): InputsDiff {
  const detailedDiff: Record<string, PropertyChange> = {};
  if (containsUnknown(news.name) || olds.name !== news.name) {
    detailedDiff.name =
      olds.name === undefined ? "ADD_REPLACE" : news.name === undefined ? "DELETE_REPLACE" : "UPDATE_REPLACE";
  }
  if (containsUnknown(news.data)) detailedDiff.data = "UPDATE";
  else {
    const a = isObject(olds.data) ? olds.data : {};
    const b = isObject(news.data) ? news.data : {};
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (a[key] === b[key]) continue;
      detailedDiff[dataPath(key)] = a[key] === undefined ? "ADD" : b[key] === undefined ? "DELETE" : "UPDATE";
    }
  }
  const replaces = detailedDiff.name ? ["name"] : [];
  return { changes: Object.keys(detailedDiff).length > 0, replaces, deleteBeforeReplace: false, detailedDiff };
}

/** Outputs of a secret that Persys knows as `meta`. */
function outputsOf(name: string, data: Props, meta: { keys: string[]; version: number } | undefined): Props {
  return { name, data, keys: meta?.keys ?? Object.keys(data).sort(), version: meta?.version ?? 0 };
}

/** An error for the engine that names the secret, never its values. */
function operationError(what: string, name: string, error: unknown): Error {
  return new Error(`${what} secret ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
}

/** Create, read, update and delete of a secret; see the module comment. */
export class SecretLifecycle {
  constructor(private readonly client: PersysClient) {}

  /** The preview's outputs: the inputs and their keys; nothing is written. */
  preview(inputs: Props): Props {
    const { name, data } = inputs;
    if (containsUnknown(data) || !isObject(data)) return { name, data };
    return { name, data, keys: Object.keys(data).sort() };
  }

  async create(inputs: Props): Promise<{ id: string; outs: Props }> {
    const name = String(inputs.name);
    if (await this.find(name)) {
      throw new Error(
        `secret ${name} already exists in Persys: adopt it with \`pulumi import persys:index:Secret <name> ${name}\`, or choose another name`,
      );
    }
    return { id: name, outs: await this.put("create", inputs) };
  }

  async update(inputs: Props): Promise<Props> {
    return this.put("update", inputs);
  }

  /** The secret's outputs and inputs from its metadata and the state's `props`; undefined when gone. */
  async read(id: string, props: Props): Promise<{ outs: Props; inputs: Props } | undefined> {
    const meta = await this.find(id);
    if (!meta) return undefined;
    const known = isObject(props.data) ? props.data : {};
    const sameVersion = props.version === meta.version;
    const data: SecretData = {};
    for (const key of meta.keys) {
      const value = known[key];
      data[key] = sameVersion && typeof value === "string" ? value : NOT_READABLE;
    }
    return { outs: outputsOf(id, data, meta), inputs: { name: id, data } };
  }

  /** Deletes the secret; one already gone is done. */
  async delete(id: string): Promise<void> {
    try {
      await this.client.secrets.delete(id);
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") return;
      throw operationError("delete", id, error);
    }
  }

  private async put(what: string, inputs: Props): Promise<Props> {
    const name = String(inputs.name);
    const data = (isObject(inputs.data) ? inputs.data : {}) as SecretData;
    try {
      const { secret } = await this.client.secrets.put(name, data);
      return outputsOf(name, data, secret);
    } catch (error) {
      throw operationError(what, name, error);
    }
  }

  private async find(name: string) {
    try {
      return await this.client.secrets.get(name);
    } catch (error) {
      if (error instanceof PersysError && error.code === "NOT_FOUND") return undefined;
      throw error;
    }
  }
}
