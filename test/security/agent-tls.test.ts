/**
 * A real agent (Docker) joined to a TLS control plane: both directions are mTLS, the control plane
 * dials the agent with its own certificate, and the agent refuses every other caller.
 */
import { X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { credentials, Metadata } from "@grpc/grpc-js";
import { loadAgentConfig, NodeAgent } from "@persys/agent";
import { agent as agentWire, api, type PersysError } from "@persys/schema";
import { PersysClient } from "@persys/sdk";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterCa, IssuedCertificate } from "../../controlplane/src/pki/cluster-ca.js";
import { AgentPool } from "../../controlplane/src/reconciler/agent-pool.js";
import { agentFlags } from "../agent/support/agent-harness.js";
import { cleanupDocker, requireDocker, testId } from "../agent/support/docker-fixtures.js";
import { type Harness, startHarness, testConfig } from "../controlplane/control-plane-harness.js";
import { runDir } from "../support/services.js";

let h: Harness;
let ca: ClusterCa;
let admin: IssuedCertificate;
let client: PersysClient;
let node: NodeAgent | undefined;
const id = testId();
const nodeId = `tls-${id}`;
const nodes: string[] = [];
const extra: NodeAgent[] = [];

async function until<T>(check: () => Promise<T | false | undefined>, timeoutMs = 20_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  await requireDocker();
  h = await startHarness(testConfig({ insecure: "false", "reconciler-resync-seconds": "5" }));
  ca = h.server.tls!.clusterCa!;
  admin = await ca.issueUser("ada", "admin");
  client = new PersysClient({
    endpoint: h.server.grpcAddress,
    tls: { caCert: ca.certPem, clientCert: admin.certPem, clientKey: admin.keyPem },
    retry: false,
  });
});

afterAll(async () => {
  await client?.workloads.delete(`web-${id}`, { allowMissing: true }).catch(() => {});
  await client?.workloads.waitFor(`web-${id}`, "deleted", { timeoutMs: 20_000 }).catch(() => {});
  await node?.close();
  for (const a of extra) await a.close();
  client?.close();
  await h?.close();
  await cleanupDocker([nodeId, ...nodes]);
});

function stateDirWithCertificate(issued: IssuedCertificate): string {
  const stateDir = mkdtempSync(join(runDir(), "agent-tls-"));
  mkdirSync(join(stateDir, "tls"), { mode: 0o700 });
  writeFileSync(join(stateDir, "tls", "node.crt"), issued.certPem);
  writeFileSync(join(stateDir, "tls", "node.key"), issued.keyPem, { mode: 0o600 });
  writeFileSync(join(stateDir, "tls", "ca.crt"), ca.certPem);
  return stateDir;
}

describe("agent over mTLS", () => {
  it("refuses to start without a certificate or join token, naming tls.certFile", async () => {
    const flags = {
      ...agentFlags(`nocert-${id}`, h.server.grpcAddress, mkdtempSync(join(runDir(), "agent-nocert-"))),
      insecure: "false",
    };
    const error = await NodeAgent.start(loadAgentConfig({ flags }), { logger: pino({ level: "silent" }) }).then(
      (a) => (void a.close(), undefined),
      (e: unknown) => e as PersysError,
    );
    expect(error?.code).toBe("INVALID_CONFIG");
    expect(error?.details[0]?.path).toBe("tls.certFile");
  });

  it("registers with its node certificate, and a workload placed on it runs", async () => {
    const issued = await ca.issueAgent(nodeId, { hosts: ["127.0.0.1"] });
    const flags = { ...agentFlags(nodeId, h.server.grpcAddress, stateDirWithCertificate(issued)), insecure: "false" };
    node = await NodeAgent.start(loadAgentConfig({ flags }), { logger: pino({ level: "error" }) });
    await client.workloads.apply(
      api.Workload.fromPartial({
        id: `web-${id}`,
        kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
        resources: { cpuMillicores: 100, memoryMib: 32 },
        placement: { nodeSelector: { "persys-test": "agent" } },
        spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "persys-test/busybox:1" }) },
      }),
    );
    const running = await client.workloads.waitFor(`web-${id}`, "running", { timeoutMs: 60_000 });
    expect(running.status?.replicas[0]?.nodeId).toBe(nodeId);
  });

  it("a new node joins with a one-time token and the CA pin, gets its certificate and registers", async () => {
    const joining = `join-${id}`;
    nodes.push(joining);
    const created = await client.security.createJoinToken({ ttlMs: 600_000 });
    const stateDir = mkdtempSync(join(runDir(), "agent-join-"));
    const flags = {
      ...agentFlags(joining, h.server.grpcAddress, stateDir),
      insecure: "false",
      "tls-join-token": created.token,
      "tls-ca-cert-hash": created.caCertHash,
    };
    const joined = await NodeAgent.start(loadAgentConfig({ flags }), { logger: pino({ level: "error" }) });
    extra.push(joined);
    const cert = new X509Certificate(readFileSync(join(stateDir, "tls", "node.crt")));
    expect(cert.subject).toContain(`CN=node:${joining}`);
    expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(statSync(join(stateDir, "tls", "node.key")).mode & 0o077).toBe(0);
    const node = await until(async () => (await client.nodes.get(joining).catch(() => undefined))?.state === 1);
    expect(node).toBe(true);
    // The token is spent: a second node cannot use it.
    const again = { ...flags, "node-id": `again-${id}`, "state-dir": mkdtempSync(join(runDir(), "agent-again-")) };
    const error = await NodeAgent.start(loadAgentConfig({ flags: again }), { logger: pino({ level: "silent" }) }).then(
      (a) => (extra.push(a), undefined),
      (e: unknown) => e as PersysError,
    );
    expect(error?.code).toBe("UNAUTHENTICATED");
  });

  it("answers only the control plane: a user certificate and a caller without one are refused", async () => {
    const call = (creds: ReturnType<typeof credentials.createSsl>) =>
      new Promise<number | undefined>((resolve) => {
        const c = new agentWire.AgentServiceClient(node!.endpoint, creds);
        c.listWorkloads(agentWire.ListWorkloadsRequest.fromPartial({}), new Metadata(), (error) => {
          c.close();
          resolve(error?.code);
        });
      });
    const asAdmin = credentials.createSsl(
      Buffer.from(ca.certPem),
      Buffer.from(admin.keyPem),
      Buffer.from(admin.certPem),
    );
    expect(await call(asAdmin)).toBe(7); // PERMISSION_DENIED: only O=control-plane may call an agent
    expect(await call(credentials.createSsl(Buffer.from(ca.certPem)))).toBe(16); // UNAUTHENTICATED
    // The same check guards the command stream the control plane pushes on.
    const pushes = new AgentPool({ credentials: asAdmin });
    const pushed = await pushes
      .apply(node!.endpoint, nodeId, agentWire.ApplyWorkloadRequest.fromPartial({ id: `intruder-${id}` }))
      .catch((e: PersysError) => e);
    pushes.close();
    expect((pushed as PersysError).message).toContain("may not call this agent: only the control plane may");
  });
});
