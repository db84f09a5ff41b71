/**
 * Docker for the agent suites: the real daemon at /var/run/docker.sock (fails loudly when it does not
 * answer or the test images are missing), test ids, and cleanup of everything a test's nodes made.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:net";
import Docker from "dockerode";

export const DOCKER_SOCKET = "/var/run/docker.sock";
export const WEB_IMAGE = "persys-test/web:1";
export const BUSYBOX_IMAGE = "persys-test/busybox:1";

export const docker = new Docker({ socketPath: DOCKER_SOCKET });

/** Fails the suite with what to do when Docker or the test images are absent (never skips). */
export async function requireDocker(): Promise<void> {
  try {
    await docker.ping();
  } catch (error) {
    throw new Error(
      `Docker does not answer at ${DOCKER_SOCKET} (${(error as Error).message}); ` +
        "start dockerd (scripts/lib/services.sh persys_start_docker does) and run test/fixtures/build-images.sh",
    );
  }
  for (const image of [WEB_IMAGE, BUSYBOX_IMAGE]) {
    try {
      await docker.getImage(image).inspect();
    } catch {
      throw new Error(`test image ${image} is missing: run test/fixtures/build-images.sh`);
    }
  }
}

/** A short random id (lowercase, DNS-safe) naming this test's nodes, workloads and volumes. */
export function testId(): string {
  return randomBytes(4).toString("hex").slice(0, 6);
}

/** Every container labelled for one of these nodes (running or not). */
export async function containersOf(nodeId: string, extra: string[] = []): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: JSON.stringify({ label: [`persys.node=${nodeId}`, ...extra] }) });
}

/** The containers of one workload on one node. */
export function workloadContainers(nodeId: string, workloadId: string): Promise<Docker.ContainerInfo[]> {
  return containersOf(nodeId, [`persys.workload=${workloadId}`]);
}

/** Removes every container of these nodes and the named volumes given. Never throws. */
export async function cleanupDocker(nodeIds: readonly string[], volumes: readonly string[] = []): Promise<void> {
  for (const nodeId of nodeIds) {
    for (const c of await containersOf(nodeId).catch(() => [])) {
      await docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => {});
    }
  }
  for (const name of volumes) {
    await docker
      .getVolume(name)
      .remove()
      .catch(() => {});
  }
}

/** Holds a host port on every address (as another process would). */
export async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  return { port: (server.address() as { port: number }).port, server };
}

/** GET a URL; the body text, or undefined when nothing answers. */
export async function httpText(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return await response.text();
  } catch {
    return undefined;
  }
}
