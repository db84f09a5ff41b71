/**
 * A simulated fleet in its own process for bench:controlplane, so the agents' CPU (gRPC servers,
 * report encoding) is not charged to the control plane's thread. Forked with IPC: the options come
 * as JSON in argv[2]; it sends {type:"ready"} once every node registered, answers {type:"stats"},
 * and closes the fleet when the parent disconnects.
 */
import { simulatedNodes, startFleet } from "../support/sim-agents/index.js";

const options = JSON.parse(process.argv[2]!) as {
  controlPlane: string;
  nodes: number;
  heartbeatIntervalMs: number;
};
const fleet = await startFleet({
  controlPlane: options.controlPlane,
  nodes: simulatedNodes({ count: options.nodes, seed: 7 }),
  heartbeatIntervalMs: options.heartbeatIntervalMs,
  endpointMode: "shared",
  rampUpMs: Math.min(20_000, options.nodes * 2),
  registrationTimeoutMs: 300_000,
  nodeOptions: { promptReports: false },
});
process.on("message", (m: { type: string }) => {
  if (m.type !== "stats") return;
  const cpu = process.cpuUsage();
  process.send!({ type: "stats", stats: { ...fleet.stats(), cpuMs: (cpu.user + cpu.system) / 1000 } });
});
process.on("disconnect", () => {
  void fleet.close().then(() => process.exit(0));
});
process.send!({ type: "ready" });
