import { type api, type FieldViolation, PersysError } from "@persys/schema";
import { inlineProject } from "../cluster/compose-workload.js";
import type { Principal, Role } from "./principal.js";

/** A spec feature that gives a workload power over its node. */
export type DangerousFeature = "privileged" | "hostNetwork" | "hostPathOutsideAllowList" | "devices";

/**
 * The cluster's policy for dangerous specs: which roles may use each feature (an empty list: nobody),
 * and the host folders any writer may bind-mount.
 */
export interface SpecPolicy {
  readonly roles: Readonly<Record<DangerousFeature, readonly Role[]>>;
  /** Absolute folders whose subtrees operators may mount (`/srv` allows `/srv/web`, not `/srvx`). */
  readonly hostPathAllowList: readonly string[];
}

export const DEFAULT_SPEC_POLICY: SpecPolicy = {
  roles: { privileged: ["admin"], hostNetwork: ["admin"], hostPathOutsideAllowList: ["admin"], devices: ["admin"] },
  hostPathAllowList: ["/srv", "/mnt", "/data"],
};

const under = (path: string, folder: string) => {
  const f = folder.replace(/\/+$/, "") || "/";
  return f === "/" || path === f || path.startsWith(`${f}/`);
};

/** Lexically normalised absolute path (`/srv/../etc` is `/etc`), so `..` cannot escape the allow-list. */
function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

interface Use {
  readonly feature: DangerousFeature;
  readonly path: string;
  readonly what: string;
}

function uses(workload: api.Workload, allowList: readonly string[]): Use[] {
  const found: Use[] = [];
  const hostPath = (path: string, source: string) => {
    const p = normalise(source);
    if (!allowList.some((folder) => under(p, normalise(folder))))
      found.push({
        feature: "hostPathOutsideAllowList",
        path,
        what: `host path ${source} (outside ${allowList.join(", ") || "an empty allow-list"})`,
      });
  };
  const spec = workload.spec;
  if (spec?.$case === "container") {
    const c = spec.value;
    if (c.privileged)
      found.push({ feature: "privileged", path: "container.privileged", what: "a privileged container" });
    if (c.hostNetwork) found.push({ feature: "hostNetwork", path: "container.hostNetwork", what: "the host network" });
    c.volumes.forEach((v, i) => {
      if (v.source?.$case === "hostPath") hostPath(`container.volumes[${i}].hostPath`, v.source.value);
    });
    c.devices.forEach((d, i) => {
      found.push({ feature: "devices", path: `container.devices[${i}]`, what: `device ${d}` });
    });
  } else if (spec?.$case === "compose") {
    const project = inlineProject(workload);
    for (const s of project?.services ?? []) {
      const at = `compose.inlineYaml.services.${s.name}`;
      if (s.privileged) found.push({ feature: "privileged", path: `${at}.privileged`, what: "a privileged container" });
      if (s.networkMode === "host")
        found.push({ feature: "hostNetwork", path: `${at}.network_mode`, what: "the host network" });
      s.volumes.forEach((v, i) => {
        if (v.type === "bind") hostPath(`${at}.volumes[${i}]`, v.source);
      });
    }
  }
  return found;
}

/**
 * Refuses a workload that uses a dangerous feature the caller's role may not use under the cluster
 * policy, naming every offending field at once (under `under`, e.g. `workloads[3]`, in a batch).
 * Nothing is applied when it throws.
 *
 * Git compose stacks are not inspected here (the control plane does not fetch them).
 *
 * @throws PersysError PERMISSION_DENIED with one detail per offending field.
 */
export function checkSpecPolicy(
  workload: api.Workload | undefined,
  caller: Principal,
  policy: SpecPolicy,
  under = "",
): void {
  if (!workload) return;
  const denied: FieldViolation[] = uses(workload, policy.hostPathAllowList)
    .filter((u) => !policy.roles[u.feature].includes(caller.role))
    .map((u) => ({
      path: under ? `${under}.${u.path}` : u.path,
      reason: `${u.what} is not allowed for role ${caller.role}${
        policy.roles[u.feature].length
          ? ` (cluster policy allows it for: ${policy.roles[u.feature].join(", ")})`
          : " (cluster policy allows it for nobody)"
      }`,
    }));
  if (denied.length === 0) return;
  throw new PersysError(
    "PERMISSION_DENIED",
    `workload ${workload.id} uses what ${caller.name} (${caller.role}) may not: ${denied.map((d) => d.path).join(", ")}`,
    { details: denied },
  );
}
