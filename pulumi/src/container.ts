import * as pulumi from "@pulumi/pulumi";
import type { HealthcheckArgs, PortArgs, RestartPolicyArgs, SecretKeyRefArgs, VolumeArgs } from "./types.js";
import { propertyBag, WORKLOAD_INPUTS, type WorkloadArgs, type WorkloadOutputs } from "./workload-args.js";

type In<T> = pulumi.Input<T>;

/** Inputs of {@link Container}. */
export interface ContainerArgs extends WorkloadArgs {
  /** Image reference, e.g. `nginx:1.27`. */
  image: In<string>;
  /** Memory reserved per replica. */
  memoryMiB?: In<number>;
  /** Replaces the image entrypoint. */
  command?: In<In<string>[]>;
  /** Replaces the image command (its arguments). */
  args?: In<In<string>[]>;
  env?: In<Record<string, In<string>>>;
  /** Variables from Persys secrets, resolved on the node. */
  secretEnv?: In<Record<string, In<SecretKeyRefArgs>>>;
  ports?: In<In<PortArgs>[]>;
  volumes?: In<In<VolumeArgs>[]>;
  /** Default on-failure. */
  restart?: In<RestartPolicyArgs>;
  healthcheck?: In<HealthcheckArgs>;
  user?: In<string>;
  workingDir?: In<string>;
  privileged?: In<boolean>;
  hostNetwork?: In<boolean>;
  /** Seconds between SIGTERM and SIGKILL. Default 10. */
  stopTimeoutSeconds?: In<number>;
}

/** Input names of {@link Container}, as in the schema. */
export const CONTAINER_INPUTS = [
  ...WORKLOAD_INPUTS,
  "image",
  "memoryMiB",
  "command",
  "args",
  "env",
  "secretEnv",
  "ports",
  "volumes",
  "restart",
  "healthcheck",
  "user",
  "workingDir",
  "privileged",
  "hostNetwork",
  "stopTimeoutSeconds",
] as const;

/**
 * A Docker container workload: `replicas` copies placed by the Persys scheduler. `pulumi up`
 * waits until every replica runs; changing inputs rolls the replicas to the new revision in place
 * (changing `name` replaces the workload).
 *
 * ```ts
 * const web = new Container("web", { image: "nginx:1.27", ports: [{ container: 80, host: 8080 }], memoryMiB: 256 });
 * export const node = web.placements.apply((p) => p[0]?.node);
 * ```
 */
export class Container extends pulumi.CustomResource implements WorkloadOutputs {
  /** @internal */
  static readonly __pulumiType = "persys:index:Container";

  /** An existing container workload, by its id (for `pulumi import`-style adoption use `import` instead). */
  static get(name: string, id: pulumi.Input<pulumi.ID>, opts?: pulumi.CustomResourceOptions): Container {
    return new Container(name, undefined, { ...opts, id });
  }

  /** Whether `obj` is a Container (works across copies of this package). */
  static override isInstance(obj: unknown): obj is Container {
    return (
      pulumi.CustomResource.isInstance(obj) &&
      (obj as { __pulumiType?: string }).__pulumiType === Container.__pulumiType
    );
  }

  declare readonly name: pulumi.Output<string>;
  declare readonly image: pulumi.Output<string>;
  declare readonly replicas: pulumi.Output<number | undefined>;
  declare readonly env: pulumi.Output<Record<string, string> | undefined>;
  declare readonly ports: pulumi.Output<
    { container: number; host?: number; protocol?: string; hostIp?: string }[] | undefined
  >;
  declare readonly revision: pulumi.Output<string>;
  declare readonly status: pulumi.Output<string>;
  declare readonly placements: WorkloadOutputs["placements"];
  declare readonly endpoints: WorkloadOutputs["endpoints"];

  constructor(name: string, args: ContainerArgs | undefined, opts?: pulumi.CustomResourceOptions) {
    super(Container.__pulumiType, name, propertyBag(args, CONTAINER_INPUTS), opts);
  }
}
