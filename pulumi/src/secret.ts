import * as pulumi from "@pulumi/pulumi";
import { propertyBag } from "./workload-args.js";

type In<T> = pulumi.Input<T>;

/** Inputs of {@link Secret}. */
export interface SecretArgs {
  /** Secret name in Persys (DNS-1123 label). Default: the resource name plus a random suffix. Changing it replaces the secret. */
  name?: In<string>;
  /**
   * Key/value pairs (keys: letters, digits, `-`, `_` and `.`; all values together at most 1 MiB).
   * Always secret: encrypted in the state and secret in the outputs, even when given as plain strings.
   */
  data: In<Record<string, In<string>>>;
}

/** Input names of {@link Secret}, as in the schema. */
export const SECRET_INPUTS = ["name", "data"] as const;
/** Output-only properties of {@link Secret}. */
export const SECRET_OUTPUTS = ["keys", "version"] as const;

/**
 * A Persys secret: named key/value pairs that containers reference (`secretEnv`, `secretFiles`).
 * Persys stores the values encrypted and never returns them; Pulumi keeps `data` secret in its
 * state and outputs. Changing `data` puts the new values in place (bumping `version` and rolling
 * the replicas that use the secret); changing `name` replaces it. `refresh` notices a deleted
 * secret and keys added or removed outside Pulumi (the next `up` puts the declared data again).
 *
 * ```ts
 * const db = new Secret("db", { data: { password: config.requireSecret("dbPassword") } });
 * new Container("api", { image: "app:1", secretEnv: { DB_PASSWORD: { secret: db.name, key: "password" } } });
 * ```
 */
export class Secret extends pulumi.CustomResource {
  /** @internal */
  static readonly __pulumiType = "persys:index:Secret";

  /** An existing secret, by its name (its values are not readable: `data` reads as placeholders). */
  static get(name: string, id: pulumi.Input<pulumi.ID>, opts?: pulumi.CustomResourceOptions): Secret {
    return new Secret(name, undefined, { ...opts, id });
  }

  /** Whether `obj` is a Secret (works across copies of this package). */
  static override isInstance(obj: unknown): obj is Secret {
    return (
      pulumi.CustomResource.isInstance(obj) && (obj as { __pulumiType?: string }).__pulumiType === Secret.__pulumiType
    );
  }

  /** The secret's name in Persys (also the resource's `id`). */
  declare readonly name: pulumi.Output<string>;
  /** The values, secret. */
  declare readonly data: pulumi.Output<Record<string, string>>;
  /** The keys Persys holds, sorted. */
  declare readonly keys: pulumi.Output<string[]>;
  /** 1 at creation; grows by one with each change of the data. */
  declare readonly version: pulumi.Output<number>;

  constructor(name: string, args: SecretArgs | undefined, opts?: pulumi.CustomResourceOptions) {
    const bag = propertyBag(args, SECRET_INPUTS, SECRET_OUTPUTS);
    if (args?.data !== undefined) bag.data = pulumi.secret(args.data);
    super(Secret.__pulumiType, name, bag, {
      ...opts,
      additionalSecretOutputs: [...new Set([...(opts?.additionalSecretOutputs ?? []), "data"])],
    });
  }
}
