import { api, type FieldViolation } from "@persys/schema";
import { checkKeys } from "./input-keys.js";
import { finish, type WorkloadInput, workloadBase, workloadInputKeys } from "./workload-input.js";

/** A compose file in a git repository, cloned on the node. */
export interface GitSourceInput {
  /** Clone URL (https:// or ssh). */
  readonly repo: string;
  /** Branch, tag or commit. Default: the default branch. */
  readonly ref?: string | undefined;
  /** Path of the compose file in the repository. Default `compose.yaml`. */
  readonly path?: string | undefined;
  /** Secret holding clone credentials. Default: anonymous clone. */
  readonly credentialsSecret?: string | undefined;
  /** Any new value makes the node fetch `ref` again (a moved branch is picked up), e.g. a time. */
  readonly refreshToken?: string | undefined;
}

/** A Compose stack in friendly form: exactly one of `inlineYaml` and `git`. See {@link compose}. */
export interface ComposeInput extends WorkloadInput {
  /** The compose file itself. */
  readonly inlineYaml?: string | undefined;
  readonly git?: GitSourceInput | undefined;
  /** Variables for interpolation in the compose file. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Compose profiles to enable. */
  readonly profiles?: readonly string[] | undefined;
  /** Compose project name. Default: derived from the workload id and replica index. */
  readonly projectName?: string | undefined;
  /** Delete also removes the stack's named volumes (`docker compose down --volumes`). Default false. */
  readonly removeVolumesOnDelete?: boolean | undefined;
}

const composeKeys = [
  ...workloadInputKeys,
  "inlineYaml",
  "git",
  "env",
  "profiles",
  "projectName",
  "removeVolumesOnDelete",
];

/**
 * A Compose workload (`api.Workload` with a `compose` spec), with defaults applied and validated
 * before any network call:
 *
 * ```ts
 * compose({ id: "blog", inlineYaml: readFileSync("compose.yaml", "utf8"), memoryMiB: 512 })
 * compose({ id: "shop", git: { repo: "https://git.example/shop.git", ref: "v2", path: "deploy/compose.yaml" } })
 * ```
 *
 * @throws PersysError INVALID_SPEC naming every bad field (e.g. both or neither of `inlineYaml` and `git`).
 */
export function compose(input: ComposeInput): api.Workload {
  const violations: FieldViolation[] = [];
  checkKeys(input, composeKeys, "", violations);
  if (input.git) checkKeys(input.git, ["repo", "ref", "path", "credentialsSecret", "refreshToken"], "git", violations);
  if (input.inlineYaml !== undefined && input.git !== undefined) {
    violations.push({ path: "compose", reason: "give one of inlineYaml or git, not both" });
  }
  const workload = workloadBase(input, api.WorkloadKind.WORKLOAD_KIND_COMPOSE, violations);
  const spec = api.ComposeSpec.fromPartial({
    source:
      input.inlineYaml !== undefined
        ? { $case: "inlineYaml", value: input.inlineYaml }
        : input.git
          ? {
              $case: "git",
              value: {
                repo: input.git.repo,
                ref: input.git.ref ?? "",
                path: input.git.path ?? "",
                credentialsSecret: input.git.credentialsSecret ?? "",
                refreshToken: input.git.refreshToken ?? "",
              },
            }
          : undefined,
    env: { ...input.env },
    profiles: [...(input.profiles ?? [])],
    projectName: input.projectName ?? "",
    removeVolumesOnDelete: input.removeVolumesOnDelete ?? false,
  });
  return finish({ ...workload, spec: { $case: "compose", value: spec } }, violations);
}
