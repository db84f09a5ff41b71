/**
 * A small app on `@persys/sdk`: applies a container, waits until it runs, prints the scheduler's
 * explanation of where each replica went, and deletes it again.
 *
 *   persys up                                   # a single-node control plane on 127.0.0.1:7070
 *   node --import tsx --conditions=development examples/sdk-app/main.ts
 *
 * The endpoint and credentials come from PERSYS_ENDPOINT/PERSYS_TOKEN/... or the current persysctl
 * context in ~/.persys/config.yaml (persys up writes one, `persys-up`, with an admin certificate).
 * EXAMPLE_ID, EXAMPLE_IMAGE, EXAMPLE_CONTAINER_PORT and EXAMPLE_HOST_PORT change what is run. Exit codes: 0 done, 1 error,
 * 2 the workload did not reach RUNNING (its diagnosis is printed).
 */
import { api, container, enumLabel, PersysClient, PersysError, WaitError } from "@persys/sdk";

const id = process.env.EXAMPLE_ID ?? "hello-web";
// The local test image (scripts/up.sh builds it: busybox httpd on 8080); no registry is needed.
const image = process.env.EXAMPLE_IMAGE ?? "persys-test/web:1";
const containerPort = Number(process.env.EXAMPLE_CONTAINER_PORT ?? 8080);
const hostPort = Number(process.env.EXAMPLE_HOST_PORT ?? 8080);

function printExplanation(explanation: api.ExplainWorkloadResponse): void {
  for (const replica of explanation.replicas) {
    const where = replica.nodeId ? `on ${replica.nodeId}` : "not placed";
    console.log(`  replica ${replica.replicaIndex} ${enumLabel(api.ReplicaState, replica.state)} ${where}`);
    const d = replica.diagnosis;
    if (!d) continue;
    console.log(`    ${d.message}`);
    for (const candidate of d.candidates) {
      const scores = candidate.scores.map((s) => `${s.plugin}=${s.score.toFixed(0)}`).join(" ");
      console.log(`    candidate ${candidate.nodeId}: ${candidate.totalScore.toFixed(1)} (${scores})`);
    }
  }
}

const client = PersysClient.fromEnvironment();
const web = container({
  id,
  image,
  ports: [{ container: containerPort, host: hostPort }],
  cpuMillicores: 100,
  memoryMiB: 128,
});
try {
  const { created } = await client.workloads.apply(web);
  console.log(`${created ? "created" : "updated"} workload ${id} at ${client.address}`);
  let last = "";
  const running = await client.workloads.waitFor(id, "running", {
    timeoutMs: 120_000,
    onProgress: (w) => {
      const state = enumLabel(api.WorkloadState, w.status?.state ?? 0);
      if (state !== last) console.log(`  ${id} is ${state}`);
      last = state;
    },
  });
  const endpoints = running.status?.replicas.flatMap((r) => r.endpoints.map((e) => `${e.address}:${e.port}`)) ?? [];
  console.log(`${id} is running (${running.status?.readyReplicas} ready) at ${endpoints.join(", ") || "no endpoint"}`);
  console.log("why it runs where it runs:");
  printExplanation(await client.workloads.explain(id));
} catch (error) {
  if (error instanceof WaitError) {
    console.error(`${id} did not start: ${error.message}`);
    if (error.explanation) printExplanation(error.explanation);
    process.exitCode = 2;
  } else if (error instanceof PersysError) {
    console.error(`${error.code}: ${error.message}`);
    for (const d of error.details) console.error(`  ${d.path}: ${d.reason}`);
    process.exitCode = 1;
  } else throw error;
} finally {
  await client.workloads.delete(id, { allowMissing: true }).catch(() => undefined);
  await client.workloads.waitFor(id, "deleted", { timeoutMs: 60_000 }).catch(() => undefined);
  console.log(`deleted workload ${id}`);
  client.close();
}
