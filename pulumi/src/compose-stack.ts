import * as pulumi from "@pulumi/pulumi";
import type { GitSourceArgs } from "./types.js";
import { propertyBag, WORKLOAD_INPUTS, type WorkloadArgs, type WorkloadOutputs } from "./workload-args.js";

type In<T> = pulumi.Input<T>;

/** Inputs of {@link ComposeStack}: exactly one of `inlineYaml` and `git`. */
export interface ComposeStackArgs extends WorkloadArgs {
  /** The compose file itself. */
  inlineYaml?: In<string>;
  /** A compose file in a git repository, cloned on the node. */
  git?: In<GitSourceArgs>;
  /** Memory reserved per replica. */
  memoryMiB?: In<number>;
  /** Variables for interpolation in the compose file. */
  env?: In<Record<string, In<string>>>;
  profiles?: In<In<string>[]>;
  /** Compose project name. Changing it replaces the stack. */
  projectName?: In<string>;
}

/** Input names of {@link ComposeStack}, as in the schema. */
export const COMPOSE_STACK_INPUTS = [
  ...WORKLOAD_INPUTS,
  "inlineYaml",
  "git",
  "memoryMiB",
  "env",
  "profiles",
  "projectName",
] as const;

/**
 * A Docker Compose stack workload, deployed on the node the scheduler picks.
 *
 * ```ts
 * new ComposeStack("blog", { inlineYaml: readFileSync("compose.yaml", "utf8"), memoryMiB: 512 });
 * ```
 */
export class ComposeStack extends pulumi.CustomResource implements WorkloadOutputs {
  /** @internal */
  static readonly __pulumiType = "persys:index:ComposeStack";

  static get(name: string, id: pulumi.Input<pulumi.ID>, opts?: pulumi.CustomResourceOptions): ComposeStack {
    return new ComposeStack(name, undefined, { ...opts, id });
  }

  static override isInstance(obj: unknown): obj is ComposeStack {
    return (
      pulumi.CustomResource.isInstance(obj) &&
      (obj as { __pulumiType?: string }).__pulumiType === ComposeStack.__pulumiType
    );
  }

  declare readonly name: pulumi.Output<string>;
  declare readonly inlineYaml: pulumi.Output<string | undefined>;
  declare readonly projectName: pulumi.Output<string | undefined>;
  declare readonly revision: pulumi.Output<string>;
  declare readonly status: pulumi.Output<string>;
  declare readonly placements: WorkloadOutputs["placements"];
  declare readonly endpoints: WorkloadOutputs["endpoints"];

  constructor(name: string, args: ComposeStackArgs | undefined, opts?: pulumi.CustomResourceOptions) {
    super(ComposeStack.__pulumiType, name, propertyBag(args, COMPOSE_STACK_INPUTS), opts);
  }
}
