/**
 * mTLS and authorisation end to end: a real control plane on real etcd and Redis serving TLS with
 * its cluster CA, real gRPC and HTTPS clients with certificates issued by that CA (or another one).
 */
import { connect } from "node:tls";
import { credentials, Metadata } from "@grpc/grpc-js";
import { api, control, HeartbeatChannel, PersysError } from "@persys/schema";
import { PersysClient } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../controlplane/src/cli/run-server.js";
import { ClusterCa, type IssuedCertificate } from "../../controlplane/src/pki/cluster-ca.js";
import { type Harness, startHarness, testConfig } from "../controlplane/control-plane-harness.js";
import { httpsJson } from "./support/https-json.js";

let h: Harness;
let server: RunningServer;
let ca: ClusterCa;
let certs: Record<"admin" | "operator" | "viewer" | "agent" | "foreign" | "expired", IssuedCertificate>;
const clients: PersysClient[] = [];

beforeAll(async () => {
  h = await startHarness(testConfig({ insecure: "false" }));
  server = h.server;
  ca = server.tls!.clusterCa!;
  const other = (await ClusterCa.generate()).ca;
  certs = {
    admin: await ca.issueUser("ada", "admin"),
    operator: await ca.issueUser("olga", "operator"),
    viewer: await ca.issueUser("vera", "viewer"),
    agent: await ca.issueAgent("n1"),
    foreign: await other.issueUser("eve", "admin"),
    expired: await ca.issueUser("old", "admin", {
      notBefore: new Date(Date.now() - 3 * 3_600_000),
      validityMs: 3_600_000,
    }),
  };
});

afterAll(async () => {
  for (const c of clients) c.close();
  await h?.close();
});

function client(cert?: IssuedCertificate, token?: string): PersysClient {
  const c = new PersysClient({
    endpoint: server.grpcAddress,
    tls: { caCert: ca.certPem, ...(cert ? { clientCert: cert.certPem, clientKey: cert.keyPem } : {}) },
    ...(token ? { token } : {}),
    retry: false,
    timeoutMs: 10_000,
  });
  clients.push(c);
  return c;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof PersysError)) throw new Error(`expected a PersysError, got ${String(error)}`);
  return error.code;
}

const rest = (
  method: string,
  path: string,
  options: { cert?: IssuedCertificate; token?: string; body?: unknown } = {},
) =>
  httpsJson(method, `${server.httpUrl}${path}`, {
    ca: ca.certPem,
    ...(options.cert ? { cert: options.cert.certPem, key: options.cert.keyPem } : {}),
    ...(options.token ? { token: options.token } : {}),
    ...(options.body === undefined ? {} : { body: options.body }),
  });

const busybox = (id: string, extra: Partial<api.ContainerSpec> = {}) =>
  api.Workload.fromPartial({
    id,
    kind: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
    resources: { cpuMillicores: 100, memoryMib: 64 },
    spec: { $case: "container", value: api.ContainerSpec.fromPartial({ image: "persys-test/busybox:1", ...extra }) },
  });

describe("TLS and identities", () => {
  it("serves HTTPS and gRPC over TLS only: a plaintext gRPC client gets nowhere", async () => {
    expect(server.httpUrl).toMatch(/^https:\/\//);
    const plain = new PersysClient({ endpoint: server.grpcAddress, retry: false, timeoutMs: 3_000 });
    clients.push(plain);
    expect(await codeOf(plain.cluster.summary())).toBe("UNAVAILABLE");
  });

  it("rejects a caller without a client certificate or token, on gRPC and REST", async () => {
    expect(await codeOf(client().cluster.summary())).toBe("UNAUTHENTICATED");
    const r = await rest("GET", "/v1/cluster/summary");
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("UNAUTHENTICATED");
  });

  it("rejects a certificate from another CA and an expired certificate", async () => {
    expect(await codeOf(client(certs.foreign).cluster.summary())).toBe("UNAUTHENTICATED");
    expect(await codeOf(client(certs.expired).cluster.summary())).toBe("UNAUTHENTICATED");
    expect((await rest("GET", "/v1/nodes", { cert: certs.foreign })).status).toBe(401);
    expect((await rest("GET", "/v1/nodes", { cert: certs.expired })).status).toBe(401);
  });

  it("lets a viewer read and refuses its apply with PERMISSION_DENIED (gRPC and REST)", async () => {
    const viewer = client(certs.viewer);
    await expect(viewer.cluster.summary()).resolves.toBeDefined();
    expect(await codeOf(viewer.workloads.apply(busybox("viewer-web")))).toBe("PERMISSION_DENIED");
    const r = await rest("PUT", "/v1/workloads/viewer-web", {
      cert: certs.viewer,
      body: api.Workload.toJSON(busybox("viewer-web")),
    });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("PERMISSION_DENIED");
    expect(await codeOf(viewer.workloads.get("viewer-web"))).toBe("NOT_FOUND");
  });

  it("refuses an operator's host-path mount of /etc, naming the field, and applies nothing", async () => {
    const operator = client(certs.operator);
    const spec = busybox("etc-reader", {
      volumes: [{ source: { $case: "hostPath", value: "/etc" }, containerPath: "/host-etc", readOnly: true }],
    });
    const error = await operator.workloads.apply(spec).then(
      () => undefined,
      (e: unknown) => e as PersysError,
    );
    expect(error?.code).toBe("PERMISSION_DENIED");
    expect(error?.details.map((d) => d.path)).toEqual(["container.volumes[0].hostPath"]);
    expect(await codeOf(operator.workloads.get("etc-reader"))).toBe("NOT_FOUND");
    await expect(
      operator.workloads.apply(
        busybox("srv-reader", {
          volumes: [{ source: { $case: "hostPath", value: "/srv/web" }, containerPath: "/web", readOnly: true }],
        }),
      ),
    ).resolves.toBeDefined();
  });

  it("an agent certificate may heartbeat only for its own node", async () => {
    const agentClient = new control.AgentControlClient(
      server.grpcAddress,
      credentials.createSsl(Buffer.from(ca.certPem), Buffer.from(certs.agent.keyPem), Buffer.from(certs.agent.certPem)),
    );
    const register = (nodeId: string) =>
      new Promise<{ code?: number; details?: string }>((resolve) =>
        agentClient.registerNode(
          control.RegisterNodeRequest.fromPartial({
            nodeId,
            grpcEndpoint: "127.0.0.1:1",
            capabilities: { cpuTotalMillicores: 1000, memoryTotalMb: 512 },
          }),
          new Metadata(),
          (error) => resolve(error ? { code: error.code, details: error.details } : {}),
        ),
      );
    expect(await register("n1")).toEqual({});
    const other = await register("n2");
    expect(other.code).toBe(7); // PERMISSION_DENIED
    expect(other.details).toContain("may only act for node n1, not n2");
    // Heartbeats over the stream are authorized one by one, against the stream's certificate.
    const heartbeats = new HeartbeatChannel(agentClient, { timeoutMs: 10_000 });
    const beat = (nodeId: string) =>
      new Promise<{ code?: number; details?: string; acknowledged?: boolean }>((resolve) =>
        heartbeats.send(control.HeartbeatRequest.fromPartial({ nodeId }), (error, response) =>
          resolve(error ? { code: error.code, details: error.details } : { acknowledged: response!.acknowledged }),
        ),
      );
    expect(await beat("n1")).toEqual({ acknowledged: true });
    expect(heartbeats.streaming).toBe(true);
    const forged = await beat("n2");
    expect(forged.code).toBe(7);
    expect(forged.details).toContain("may only act for node n1, not n2");
    expect(await beat("n1")).toEqual({ acknowledged: true });
    heartbeats.close();
    agentClient.close();
  });

  it("accepts a bearer token (CI, SDK, browsers) with its role", async () => {
    const { token } = await server.controlPlane.tokens.create({ name: "ci", role: "viewer" });
    await expect(client(undefined, token).cluster.summary()).resolves.toBeDefined();
    expect((await rest("GET", "/v1/cluster/summary", { token })).status).toBe(200);
    expect((await rest("GET", "/v1/cluster/summary", { token: `${token.slice(0, -2)}xx` })).status).toBe(401);
    expect(await codeOf(client(undefined, token).workloads.apply(busybox("token-web")))).toBe("PERMISSION_DENIED");
  });

  it("audits every mutation and refusal: who, what, result", async () => {
    const events = await client(certs.admin)
      .events.list({ types: ["RequestAudited"] })
      .toArray();
    const seen = events.map((e) => `${e.attributes.who} ${e.attributes.method} ${e.attributes.result}`);
    expect(seen).toContain("vera persys.api.v1/applyWorkload PERMISSION_DENIED");
    expect(seen).toContain("olga persys.api.v1/applyWorkload OK");
  });
});

function serialOf(address: string, alpn?: string): Promise<string> {
  const at = address.lastIndexOf(":");
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: address.slice(0, at),
        port: Number(address.slice(at + 1)),
        ca: ca.certPem,
        ...(alpn ? { ALPNProtocols: [alpn] } : {}),
      },
      () => {
        const serial = socket.getPeerCertificate().serialNumber;
        socket.end();
        resolve(serial);
      },
    );
    socket.on("error", reject);
  });
}

describe("certificate rotation", () => {
  it("swaps the server certificate under continuous requests with zero failures", async () => {
    const admin = client(certs.admin);
    const before = await serialOf(server.grpcAddress, "h2");
    let failures = 0;
    let ok = 0;
    let running = true;
    const loop = async () => {
      while (running) {
        try {
          await admin.cluster.summary();
          const r = await rest("GET", "/v1/nodes", { cert: certs.admin });
          if (r.status !== 200) failures++;
          else ok++;
        } catch {
          failures++;
        }
      }
    };
    const loops = [loop(), loop(), loop()];
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 300));
      await server.tls!.rotate();
    }
    await new Promise((r) => setTimeout(r, 300));
    running = false;
    await Promise.all(loops);
    expect(failures).toBe(0);
    expect(ok).toBeGreaterThan(10);
    const after = await serialOf(server.grpcAddress, "h2");
    expect(after).not.toBe(before);
    const httpsAt = new URL(server.httpUrl);
    expect(await serialOf(`${httpsAt.hostname}:${httpsAt.port}`)).toBe(after);
  });
});
