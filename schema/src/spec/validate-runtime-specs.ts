import { readCompose } from "../compose/compose-parser.js";
import type { ComposeSpec } from "../gen/persys/api/v1/compose.js";
import { type ContainerSpec, Protocol, RestartPolicyMode } from "../gen/persys/api/v1/container.js";
import type { VmSpec } from "../gen/persys/api/v1/vm.js";
import { validateSecretRefs } from "./secret-refs.js";
import { checkAbsolutePath, checkDnsLabel, checkRange, type Violations } from "./violations.js";

const envName = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function checkEnv(v: Violations, env: Record<string, string>, segment: string): void {
  for (const key of Object.keys(env)) {
    if (!envName.test(key)) v.at(segment).add(`"${key}" is not a valid environment variable name`, key);
  }
}

/** Checks a container spec: image, ports (no duplicate host port per protocol), volumes, policies. */
export function validateContainer(v: Violations, spec: ContainerSpec): void {
  if (!spec.image.trim()) v.add("is required", "image");
  else if (/\s/.test(spec.image)) v.add("must not contain whitespace", "image");
  checkEnv(v, spec.env, "env");
  for (const key of Object.keys(spec.secretEnv)) {
    if (!envName.test(key)) v.at("secretEnv").add(`"${key}" is not a valid environment variable name`, key);
  }
  validateSecretRefs(v, spec);
  const hostPorts = new Map<string, number>();
  spec.ports.forEach((port, i) => {
    const item = v.at("ports").at(i);
    checkRange(item, port.containerPort, "containerPort", 1, 65_535);
    checkRange(item, port.hostPort, "hostPort", 0, 65_535);
    if (port.hostPort > 0) {
      const key = `${port.hostIp || "0.0.0.0"}:${port.hostPort}/${port.protocol === Protocol.PROTOCOL_UDP ? "udp" : "tcp"}`;
      const first = hostPorts.get(key);
      if (first !== undefined) item.add(`host port ${key} is already used by ports[${first}]`, "hostPort");
      else hostPorts.set(key, i);
    }
    if (port.hostIp && !/^[0-9a-fA-F.:]+$/.test(port.hostIp)) item.add("must be an IP address", "hostIp");
  });
  spec.volumes.forEach((volume, i) => {
    const item = v.at("volumes").at(i);
    checkAbsolutePath(item, volume.containerPath, "containerPath");
    if (!volume.source) item.add("one of hostPath or volume is required");
    else if (volume.source.$case === "hostPath") checkAbsolutePath(item, volume.source.value, "hostPath");
    else checkDnsLabel(item, volume.source.value, "volume", "volume name");
  });
  spec.devices.forEach((device, i) => {
    const [host = "", inside, permissions, ...rest] = device.split(":");
    const item = v.at("devices");
    if (!host.startsWith("/dev/")) item.add("must start with a host device under /dev/", i);
    else if (inside !== undefined && !inside.startsWith("/")) item.add("the container path must be absolute", i);
    else if ((permissions !== undefined && !/^[rwm]{1,3}$/.test(permissions)) || rest.length > 0)
      item.add("must be /dev/host[:/dev/container[:rwm]]", i);
  });
  const restart = spec.restartPolicy;
  if (restart) {
    if (restart.maxRetries < 0) v.at("restartPolicy").add("must be >= 0", "maxRetries");
    if (restart.maxRetries > 0 && restart.mode !== RestartPolicyMode.RESTART_POLICY_MODE_ON_FAILURE) {
      v.at("restartPolicy").add("is only meaningful with mode on-failure", "maxRetries");
    }
  }
  const health = spec.healthcheck;
  if (health) {
    const item = v.at("healthcheck");
    if (health.command.length === 0) item.add("is required when a healthcheck is set", "command");
    for (const field of ["intervalSeconds", "timeoutSeconds", "retries", "startPeriodSeconds"] as const) {
      checkRange(item, health[field], field, 0, 86_400);
    }
  }
  checkRange(v, spec.stopTimeoutSeconds, "stopTimeoutSeconds", 0, 3_600);
  if (spec.workingDir) checkAbsolutePath(v, spec.workingDir, "workingDir");
}

/**
 * Checks a compose spec's source and names. An inline file is parsed and validated here too (paths
 * `compose.inlineYaml.services.<name>.<field>`); a git-sourced file can only be read on the node, so
 * the agent validates it after fetching and reports the same errors as the replica's reason.
 */
export function validateCompose(v: Violations, spec: ComposeSpec): void {
  if (!spec.source) v.add("one of inlineYaml or git is required");
  else if (spec.source.$case === "inlineYaml") {
    if (!spec.source.value.trim()) v.add("must not be empty", "inlineYaml");
    else {
      const result = readCompose({
        file: "inline",
        content: spec.source.value,
        env: spec.env,
        profiles: spec.profiles,
      });
      if (!result.ok)
        for (const bad of result.violations)
          v.at("inlineYaml").add(`inline compose file: ${bad.reason}`, bad.path.startsWith("(") ? undefined : bad.path);
    }
  } else {
    const git = v.at("git");
    if (!spec.source.value.repo) git.add("is required", "repo");
    if (spec.source.value.path.split("/").includes("..")) git.add("must stay inside the repository", "path");
  }
  if (spec.projectName && !/^[a-z0-9][a-z0-9_-]*$/.test(spec.projectName)) {
    v.add("must be lowercase letters, digits, '-' and '_'", "projectName");
  }
  checkEnv(v, spec.env, "env");
}

/** Checks a VM spec: sizes, base image, disks and networks. */
export function validateVm(v: Violations, spec: VmSpec): void {
  checkRange(v, spec.vcpus, "vcpus", 1, 256);
  checkRange(v, spec.memoryMib, "memoryMib", 64, 4_194_304);
  if (!spec.baseImage?.value) v.add("one of imageName or imagePath is required");
  else if (spec.baseImage.$case === "imagePath") checkAbsolutePath(v, spec.baseImage.value, "imagePath");
  const names = new Set<string>();
  spec.disks.forEach((disk, i) => {
    const item = v.at("disks").at(i);
    checkRange(item, disk.sizeGib, "sizeGib", 1, 65_536);
    if (disk.name) {
      checkDnsLabel(item, disk.name, "name", "disk name");
      if (names.has(disk.name)) item.add(`disk name "${disk.name}" is used twice`, "name");
      names.add(disk.name);
    }
  });
  spec.networks.forEach((network, i) => {
    const item = v.at("networks").at(i);
    if (!network.network) item.add("is required", "network");
    if (network.mac && !/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(network.mac)) item.add("must be a MAC address", "mac");
  });
}
