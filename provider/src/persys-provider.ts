/**
 * The Persys resource provider: the engine's requests mapped onto `@persys/sdk`.
 *
 * ```ts
 * import { PersysProvider } from "./persys-provider.js";
 * import { serveResourceProvider } from "./plugin/provider-server.js";
 * await serveResourceProvider(new PersysProvider());
 * ```
 *
 * - check: validates with the SDK's builders and returns `{property, reason}` failures by input
 *   name; valid inputs come back canonical (see `workload-inputs.ts`), with a generated name
 *   (`<resource name>-<7 hex>`, from the engine's random seed) when none is given, kept across updates.
 * - diff: field-level over canonical inputs (`workload-diff.ts`).
 * - create/update in a preview: no call that writes; the workload is planned (`getPlan`) and the
 *   planned placement is shown in the preview and the outputs.
 * - create/update/delete honour the resource's custom timeouts (default 5 minutes).
 * - `persys:index:Secret` goes to `resources/secret-resource.ts`; properties the schema marks
 *   `"secret": true` (a Secret's `data`) are secret in every response.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { PersysClient, PersysError } from "@persys/sdk";
import { clientOptionsOf, type ProviderConfig, providerConfigOf } from "./config/provider-config.js";
import { invokeFunction } from "./functions/provider-functions.js";
import { containsUnknown, type Props } from "./plugin/property-values.js";
import type { CheckFailure, OperationOptions, ResourceHandler } from "./plugin/provider-server.js";
import { kindOfUrn, nameOfUrn, SECRET_TYPE, typeOfUrn, type WorkloadKindName } from "./resources/resource-types.js";
import { checkSecretInputs, diffSecretInputs, SecretLifecycle, secretInputPart } from "./resources/secret-resource.js";
import { diffInputs, type InputsDiff } from "./resources/workload-diff.js";
import { canonicalInputs, type Inputs, inputPathOf, toWorkload } from "./resources/workload-inputs.js";
import { DEFAULT_OPERATION_TIMEOUT_MS, WorkloadLifecycle } from "./resources/workload-lifecycle.js";
import { describePlan, OUTPUT_ONLY, plannedOutputsOf } from "./resources/workload-outputs.js";

/** The provider's version (GetPluginInfo); the package schema carries the same. */
export const PROVIDER_VERSION = "0.1.0";

/** The package schema (`schema/pulumi/schema.json`, exported by `@persys/schema`). */
export function packageSchema(): string {
  return readFileSync(createRequire(import.meta.url).resolve("@persys/schema/pulumi/schema.json"), "utf8");
}

/** A DNS-1123 workload id from a Pulumi resource name and a suffix. */
export function autoName(resourceName: string, seed: Uint8Array): string {
  const base =
    resourceName
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^[^a-z]+/, "")
      .replace(/-+$/, "")
      .slice(0, 55) || "workload";
  const entropy = seed.length > 0 ? Buffer.from(seed) : randomBytes(16);
  return `${base}-${createHash("sha256").update(entropy).digest("hex").slice(0, 7)}`;
}

/** The input part of stored properties (outputs minus the output-only keys). */
function inputPart(props: Props): Inputs {
  const inputs = { ...props };
  for (const key of OUTPUT_ONLY) delete inputs[key];
  return inputs;
}

/** Per resource type, the top-level properties the schema marks `"secret": true`. */
export function secretPropertiesOf(schema: string): Record<string, string[]> {
  const resources = (JSON.parse(schema).resources ?? {}) as Record<
    string,
    { properties?: object; inputProperties?: object }
  >;
  const out: Record<string, string[]> = {};
  for (const [type, resource] of Object.entries(resources)) {
    const props = { ...resource.inputProperties, ...resource.properties } as Record<string, { secret?: boolean }>;
    const secret = Object.keys(props).filter((key) => props[key]?.secret === true);
    if (secret.length > 0) out[type] = secret.sort();
  }
  return out;
}

const isSecretUrn = (urn: string) => typeOfUrn(urn) === SECRET_TYPE;

/** Check failures for an SDK validation error; other errors are rethrown. */
function failuresOf(error: unknown): CheckFailure[] {
  if (error instanceof PersysError && error.details.length > 0) {
    return error.details.map((d) => ({ property: inputPathOf(d.path), reason: d.reason }));
  }
  throw error;
}

export class PersysProvider implements ResourceHandler {
  readonly version = PROVIDER_VERSION;
  readonly schema = packageSchema();
  private readonly secretProps = secretPropertiesOf(this.schema);
  private config: ProviderConfig = {};
  private client: PersysClient | undefined;

  /** `env` stands in for `process.env` (tests). */
  constructor(private readonly env: Readonly<Record<string, string | undefined>> = process.env) {}

  async configure(args: Props): Promise<void> {
    this.config = providerConfigOf(args);
    this.client?.close();
    this.client = undefined;
  }

  /** The SDK client, made on first use from the configuration (so a preview with no calls needs no server). */
  private sdk(): PersysClient {
    this.client ??= new PersysClient(clientOptionsOf(this.config, this.env));
    return this.client;
  }

  private lifecycle(): WorkloadLifecycle {
    return new WorkloadLifecycle(this.sdk());
  }

  private secrets(): SecretLifecycle {
    return new SecretLifecycle(this.sdk());
  }

  secretProperties(urn: string): readonly string[] {
    return this.secretProps[typeOfUrn(urn)] ?? [];
  }

  async check(urn: string, olds: Props, news: Props, seed: Uint8Array) {
    const named = {
      ...news,
      name: news.name ?? olds.name ?? autoName(nameOfUrn(urn), seed),
    };
    if (containsUnknown(named)) return { inputs: named, failures: [] };
    if (isSecretUrn(urn)) return checkSecretInputs(named);
    const kind = kindOfUrn(urn);
    try {
      return { inputs: canonicalInputs(kind, named), failures: [] };
    } catch (error) {
      return { inputs: named, failures: failuresOf(error) };
    }
  }

  async diff(urn: string, _id: string, olds: Props, news: Props): Promise<InputsDiff> {
    if (isSecretUrn(urn)) return diffSecretInputs(secretInputPart(olds), news);
    const kind = kindOfUrn(urn);
    const canonical = (inputs: Inputs) => {
      if (containsUnknown(inputs)) return inputs;
      try {
        return canonicalInputs(kind, inputs);
      } catch {
        return inputs;
      }
    };
    return diffInputs(kind, canonical(inputPart(olds)), canonical(news));
  }

  async create(urn: string, news: Props, options: OperationOptions) {
    if (isSecretUrn(urn)) {
      return options.preview ? { id: "", outs: this.secrets().preview(news) } : this.secrets().create(news);
    }
    const kind = kindOfUrn(urn);
    if (options.preview) {
      return { id: "", outs: await this.preview(kind, news, options) };
    }
    const timeout = options.timeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
    return this.lifecycle().create(kind, news, timeout);
  }

  async read(urn: string, id: string, props: Props) {
    if (isSecretUrn(urn)) return this.secrets().read(id, props);
    return this.lifecycle().read(kindOfUrn(urn), id);
  }

  async update(urn: string, _id: string, _olds: Props, news: Props, options: OperationOptions) {
    if (isSecretUrn(urn)) return options.preview ? this.secrets().preview(news) : this.secrets().update(news);
    const kind = kindOfUrn(urn);
    if (options.preview) return this.preview(kind, news, options);
    return this.lifecycle().update(kind, news, options.timeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS);
  }

  async delete(urn: string, id: string, _props: Props, options: OperationOptions) {
    if (isSecretUrn(urn)) return this.secrets().delete(id);
    await this.lifecycle().delete(id, options.timeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS);
  }

  async invoke(token: string, args: Props) {
    return invokeFunction(() => this.sdk(), token, args);
  }

  /**
   * A preview's outputs: the dry-run placement when every input is known and the control plane
   * answers, else the inputs alone (a preview must not fail because the cluster is unreachable).
   */
  private async preview(kind: WorkloadKindName, news: Props, options: OperationOptions): Promise<Props> {
    if (containsUnknown(news)) return news;
    try {
      const plan = await this.sdk().workloads.plan(toWorkload(kind, news));
      options.log(describePlan(plan));
      return plannedOutputsOf(news, plan);
    } catch (error) {
      options.log(`no planned placement: ${(error as Error).message}`);
      return news;
    }
  }
}
