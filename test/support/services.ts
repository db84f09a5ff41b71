/**
 * The real services the test command (`scripts/test.sh`) started. A suite that needs one calls these
 * and fails loudly when the service is absent: no suite is skipped for want of a service.
 */
import { spawnSync } from "node:child_process";

function required(variable: string, service: string): string {
  const value = process.env[variable];
  if (!value) {
    throw new Error(
      `${service} is not available to this test run (${variable} is unset). ` +
        "Run the suite with ./scripts/test.sh, which installs and starts it.",
    );
  }
  return value;
}

/** Endpoints of the etcd server the test command started, e.g. `["http://127.0.0.1:23790"]`. */
export function etcdEndpoints(): string[] {
  return required("PERSYS_TEST_ETCD_ENDPOINTS", "etcd").split(",");
}

/** URL of the Redis server the test command started, e.g. `redis://127.0.0.1:63790`. */
export function redisUrl(): string {
  return required("PERSYS_TEST_REDIS_URL", "Redis");
}

/** Folder for this run's scratch data; removed by the test command at the end. */
export function runDir(): string {
  return required("PERSYS_TEST_RUN_DIR", "the test run folder");
}

/** Path of an installed binary (e.g. `redis-server`), or a loud failure naming the package. */
export function binary(name: string, debianPackage: string): string {
  const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  const path = found.stdout.trim();
  if (found.status !== 0 || !path) {
    throw new Error(`${name} is not installed (Debian package ${debianPackage}); ./scripts/test.sh installs it`);
  }
  return path;
}
