import type { ServerConfig } from "../config/server-config.js";
import type { SpecPolicy } from "./spec-policy.js";

/** The dangerous-spec policy the server configuration describes. */
export function specPolicyFromConfig(security: ServerConfig["security"]): SpecPolicy {
  return {
    roles: {
      privileged: security.privilegedRoles,
      hostNetwork: security.hostNetworkRoles,
      hostPathOutsideAllowList: security.hostPathRoles,
      devices: security.deviceRoles,
    },
    hostPathAllowList: security.hostPathAllowList,
  };
}
