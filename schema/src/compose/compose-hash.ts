import { createHash } from "node:crypto";
import { canonical } from "../spec/workload-revision.js";
import type { ComposeNetwork, ComposeProject, ComposeService, ComposeVolume } from "./compose-model.js";

/**
 * The effective configuration hash of a service (`com.docker.compose.config-hash`): SHA-256 of its
 * normalised model plus the networks and volumes it uses. `replicas` is left out (scaling adds or
 * removes containers, it does not recreate them). A service is recreated exactly when this changes.
 */
export function serviceConfigHash(service: ComposeService, project: ComposeProject): string {
  const { replicas: _replicas, ...rest } = service;
  const networks: ComposeNetwork[] = project.networks.filter((n) => n.key in service.networks);
  const named = new Set(service.volumes.filter((m) => m.type === "volume" && m.source).map((m) => m.source));
  const volumes: ComposeVolume[] = project.volumes.filter((v) => named.has(v.key));
  return createHash("sha256")
    .update(canonical({ service: rest, networks, volumes }))
    .digest("hex");
}
