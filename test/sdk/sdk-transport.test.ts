/**
 * The SDK's transport: bearer tokens, TLS and mTLS (against the real control plane API served over
 * TLS with certificates made by openssl), retries of retryable errors only, deadlines, and log
 * streams (against a stub WorkloadService that records what it was sent).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Metadata, Server, ServerCredentials, type ServerWritableStream, status } from "@grpc/grpc-js";
import { toGrpcStatus } from "@persys/schema";
import { api, container, PersysClient, PersysError } from "@persys/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGrpcServer } from "../../controlplane/src/api/grpc/index.js";
import type { CallContext, PersysApi } from "../../controlplane/src/api/persys-api.js";
import { freePort } from "../support/free-port.js";
import { scratchDir, simNode, startSdkCluster } from "./sdk-cluster.js";

type Behaviour = (attempt: number, metadata: Metadata) => PersysError | "hang" | undefined;

/** A WorkloadService whose applyWorkload fails as `behaviour` says, counting attempts. */
class StubWorkloads {
  attempts = 0;
  metadata: Metadata[] = [];
  logCancelled = false;
  behaviour: Behaviour = () => undefined;
  readonly server = new Server();

  constructor() {
    const unimplemented = (_call: unknown, callback: (e: unknown) => void) => callback({ code: status.UNIMPLEMENTED });
    const handlers: Record<string, unknown> = {};
    for (const name of Object.keys(api.WorkloadServiceService)) handlers[name] = unimplemented;
    handlers.applyWorkload = (
      call: { request: api.ApplyWorkloadRequest; metadata: Metadata },
      callback: (e: unknown, r?: api.ApplyWorkloadResponse) => void,
    ) => {
      this.attempts++;
      this.metadata.push(call.metadata);
      const failure = this.behaviour(this.attempts, call.metadata);
      if (failure === "hang") return;
      if (failure) callback(toGrpcStatus(failure));
      else callback(null, { workload: call.request.workload, changed: true, created: true });
    };
    handlers.streamWorkloadLogs = (
      call: ServerWritableStream<api.StreamWorkloadLogsRequest, api.StreamWorkloadLogsResponse>,
    ) => {
      call.on("cancelled", () => {
        this.logCancelled = true;
      });
      let n = 0;
      const timer = setInterval(() => {
        if (call.cancelled) return clearInterval(timer);
        call.write({
          replicaIndex: n % 2,
          stream: api.LogStream.LOG_STREAM_STDOUT,
          line: `line ${n}`,
          time: new Date(),
          service: "",
          nodeId: "n1",
        });
        n++;
        if (!call.request.follow && n === 3) {
          clearInterval(timer);
          call.end();
        }
      }, 10);
    };
    this.server.addService(api.WorkloadServiceService, handlers as never);
  }

  listen(port = 0): Promise<number> {
    return new Promise((resolve, reject) =>
      this.server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
  }
}

const web = container({ id: "web", image: "nginx" });
let stub: StubWorkloads;
let endpoint: string;

beforeAll(async () => {
  stub = new StubWorkloads();
  endpoint = `127.0.0.1:${await stub.listen()}`;
});
afterAll(() => stub.server.forceShutdown());

const clientOf = (options: ConstructorParameters<typeof PersysClient>[0] = {}) =>
  new PersysClient({ endpoint, retry: { maxAttempts: 3, initialBackoffMs: 20 }, ...options });

describe("retries and metadata", () => {
  it.each([
    {
      name: "UNAVAILABLE is retried until attempts run out",
      fail: () => new PersysError("UNAVAILABLE", "down"),
      attempts: 3,
      code: "UNAVAILABLE",
    },
    {
      name: "UNAVAILABLE then success",
      fail: (n: number) => (n < 3 ? new PersysError("UNAVAILABLE", "down") : undefined),
      attempts: 3,
      code: undefined,
    },
    {
      name: "INVALID_SPEC is never retried",
      fail: () => new PersysError("INVALID_SPEC", "bad", { details: [{ path: "container.image", reason: "x" }] }),
      attempts: 1,
      code: "INVALID_SPEC",
    },
    {
      name: "NOT_FOUND is not retried",
      fail: () => new PersysError("NOT_FOUND", "gone"),
      attempts: 1,
      code: "NOT_FOUND",
    },
    {
      name: "the server's retryable=false wins",
      fail: () => new PersysError("UNAVAILABLE", "off", { retryable: false }),
      attempts: 1,
      code: "UNAVAILABLE",
    },
    {
      name: "CONFLICT is retried",
      fail: (n: number) => (n === 1 ? new PersysError("CONFLICT", "raced") : undefined),
      attempts: 2,
      code: undefined,
    },
  ])("$name", async ({ fail, attempts, code }) => {
    stub.attempts = 0;
    stub.behaviour = fail;
    const client = clientOf();
    try {
      const result = await client.workloads.apply(web).catch((e: unknown) => e);
      expect(stub.attempts).toBe(attempts);
      if (code) {
        expect(result).toBeInstanceOf(PersysError);
        expect((result as PersysError).code).toBe(code);
      } else expect(result).toMatchObject({ created: true });
    } finally {
      client.close();
    }
  });

  it("keeps the server's error details", async () => {
    stub.behaviour = () =>
      new PersysError("INVALID_SPEC", "bad port", {
        details: [{ path: "container.ports[0].hostPort", reason: "in use" }],
      });
    const client = clientOf();
    const error = (await client.workloads.apply(web).catch((e) => e)) as PersysError;
    client.close();
    expect(error.details).toEqual([{ path: "container.ports[0].hostPort", reason: "in use" }]);
  });

  it("does not retry CONFLICT of a conditional apply", async () => {
    stub.attempts = 0;
    stub.behaviour = () => new PersysError("CONFLICT", "revision moved");
    const client = clientOf();
    await expect(client.workloads.apply(web, { expectedRevision: "abc" })).rejects.toMatchObject({ code: "CONFLICT" });
    client.close();
    expect(stub.attempts).toBe(1);
  });

  it("sends the token as a bearer authorization header, also on plaintext", async () => {
    stub.behaviour = () => undefined;
    const client = clientOf({ token: "s3cret" });
    await client.workloads.apply(web);
    client.close();
    expect(stub.metadata.at(-1)?.get("authorization")).toEqual(["Bearer s3cret"]);
    expect(String(stub.metadata.at(-1)?.get("user-agent"))).toContain("persys-sdk/");
  });

  it("gives up at the call's deadline with DEADLINE_EXCEEDED, not retried", async () => {
    stub.attempts = 0;
    stub.behaviour = () => "hang";
    const client = clientOf({ timeoutMs: 300 });
    const started = Date.now();
    await expect(client.workloads.apply(web)).rejects.toMatchObject({ code: "DEADLINE_EXCEEDED" });
    client.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(stub.attempts).toBe(1);
  });

  it("succeeds when the server comes up while the call is retrying", async () => {
    const late = new StubWorkloads();
    const port = await freePort();
    const client = new PersysClient({
      endpoint: `127.0.0.1:${port}`,
      retry: { maxAttempts: 6, initialBackoffMs: 200 },
    });
    setTimeout(() => void late.listen(port), 300);
    try {
      await expect(client.workloads.apply(web)).resolves.toMatchObject({ created: true });
    } finally {
      client.close();
      late.server.forceShutdown();
    }
  });
});

describe("logs", () => {
  it("streams lines of every replica, and ends with the stream", async () => {
    const client = clientOf();
    const lines = [];
    for await (const line of client.workloads.logs("web")) lines.push([line.replicaIndex, line.line]);
    client.close();
    expect(lines).toEqual([
      [0, "line 0"],
      [1, "line 1"],
      [0, "line 2"],
    ]);
  });

  it("cancels a followed stream when the loop breaks", async () => {
    stub.logCancelled = false;
    const client = clientOf();
    let n = 0;
    for await (const _ of client.workloads.logs("web", { follow: true })) if (++n === 5) break;
    await new Promise((r) => setTimeout(r, 100));
    client.close();
    expect(stub.logCancelled).toBe(true);
  });

  it("rejects with the server's error when logs are not available", async () => {
    const cluster = await startSdkCluster();
    try {
      await expect(cluster.client.workloads.logs("web").next()).rejects.toBeInstanceOf(PersysError);
    } finally {
      await cluster.close();
    }
  });
});

/** A CA, a server certificate for 127.0.0.1/localhost/persys.local and a client certificate, by openssl. */
function makeCertificates(): Record<
  "ca" | "serverCert" | "serverKey" | "clientCert" | "clientKey" | "otherCa",
  string
> {
  const dir = scratchDir("sdk-tls-");
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ca = (name: string) => {
    run(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      `/CN=${name}`,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
    );
  };
  ca("ca");
  ca("other-ca");
  const leaf = (name: string, subject: string, ext: string) => {
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", `${name}.key`, "-out", `${name}.csr`);
    writeFile(dir, `${name}.ext`, ext);
    run(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.pem`,
    );
  };
  leaf(
    "server",
    "/CN=persys-server",
    "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:persys.local\nextendedKeyUsage=serverAuth",
  );
  // CN the name, O the role: the control plane's identity convention (docs/security.md).
  leaf("client", "/CN=alice/O=operator", "extendedKeyUsage=clientAuth");
  const file = (name: string) => join(dir, name);
  return {
    ca: file("ca.pem"),
    otherCa: file("other-ca.pem"),
    serverCert: file("server.pem"),
    serverKey: file("server.key"),
    clientCert: file("client.pem"),
    clientKey: file("client.key"),
  };
}

function writeFile(dir: string, name: string, text: string): void {
  execFileSync("sh", ["-c", `printf '%s\\n' "$1" > "$2"`, "sh", text, join(dir, name)]);
}

describe("TLS and mTLS against the real API", () => {
  let cluster: Awaited<ReturnType<typeof startSdkCluster>>;
  let tlsEndpoint: string;
  let close: () => Promise<void>;
  const identities: (string | undefined)[] = [];
  let certs: ReturnType<typeof makeCertificates>;

  beforeAll(async () => {
    certs = makeCertificates();
    cluster = await startSdkCluster([simNode("n1")]);
    const real = cluster.server.controlPlane.api;
    const core = Object.create(real, {
      getClusterSummary: {
        value: (request: api.GetClusterSummaryRequest, ctx: CallContext) => {
          // What the transport verified (the authorisation layer behind `real` turns it into the principal).
          identities.push(ctx.credentials?.certificate?.commonName);
          return real.getClusterSummary(request, ctx);
        },
      },
    }) as PersysApi;
    const grpc = await startGrpcServer({
      address: "127.0.0.1:0",
      api: core,
      health: cluster.server.controlPlane.health,
      credentials: ServerCredentials.createSsl(
        readFileSync(certs.ca),
        [{ cert_chain: readFileSync(certs.serverCert), private_key: readFileSync(certs.serverKey) }],
        true,
      ),
    });
    tlsEndpoint = `127.0.0.1:${grpc.port}`;
    close = async () => {
      await grpc.close(100);
      await cluster.close();
    };
  });
  afterAll(async () => close?.());

  it("connects with mTLS: the server verifies the client certificate", async () => {
    const client = new PersysClient({
      endpoint: `https://${tlsEndpoint}`,
      tls: { caCert: certs.ca, clientCert: certs.clientCert, clientKey: readFileSync(certs.clientKey, "utf8") },
    });
    try {
      expect((await client.cluster.summary()).nodesTotal).toBe(1);
      expect(identities.at(-1)).toBe("alice");
      await client.workloads.apply(container({ id: "over-tls", image: "x", memoryMiB: 16 }));
      expect((await client.workloads.waitFor("over-tls", "running", { timeoutMs: 15_000 })).id).toBe("over-tls");
    } finally {
      client.close();
    }
  });

  it("checks the server name, which serverName can override", async () => {
    const client = new PersysClient({
      endpoint: tlsEndpoint,
      tls: {
        caCert: readFileSync(certs.ca),
        clientCert: certs.clientCert,
        clientKey: certs.clientKey,
        serverName: "persys.local",
      },
    });
    try {
      expect((await client.cluster.summary()).nodesTotal).toBe(1);
    } finally {
      client.close();
    }
  });

  it.each([
    {
      name: "a server signed by another CA",
      tls: () => ({ caCert: certs.otherCa, clientCert: certs.clientCert, clientKey: certs.clientKey }),
    },
    { name: "no client certificate", tls: () => ({ caCert: certs.ca }) },
    { name: "plaintext to a TLS port", tls: () => false as const },
  ])("fails with UNAVAILABLE for $name", async ({ tls }) => {
    const client = new PersysClient({ endpoint: tlsEndpoint, tls: tls(), retry: false, timeoutMs: 5_000 });
    try {
      await expect(client.cluster.summary()).rejects.toMatchObject({ code: "UNAVAILABLE" });
    } finally {
      client.close();
    }
  });
});
