/**
 * Secrets end to end, on real etcd and on the embedded store, with a real agent on Docker: a value
 * reaches the container (env and file, seen in its log through the API) and nowhere else — not the
 * raw store bytes, the control plane's data dir, the agent's state dir, the server and agent logs,
 * the events, `persysctl describe/get`. A new value rolls the replica; delete is refused while used.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { loadAgentConfig, NodeAgent } from "@persys/agent";
import { Etcd3 } from "etcd3";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, runServer } from "../../controlplane/src/cli/run-server.js";
import { runCli } from "../../sdk/src/cli/program.js";
import { agentFlags, until } from "../agent/support/agent-harness.js";
import { BUSYBOX_IMAGE, cleanupDocker, requireDocker, testId } from "../agent/support/docker-fixtures.js";
import { testConfig } from "../controlplane/control-plane-harness.js";
import { etcdEndpoints, runDir } from "../support/services.js";

/** A pino destination that keeps every line. */
function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  return {
    stream: new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    }),
    text: () => chunks.join(""),
  };
}

/** Every file under `dir`, concatenated (binary). */
function bytesUnder(dir: string): Buffer {
  const out: Buffer[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) out.push(readFileSync(path));
    }
  };
  walk(dir);
  return Buffer.concat(out);
}

/** persysctl in process: stdout of one run. */
async function persysctl(endpoint: string, args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const sink = new Writable({
    write(chunk, _e, done) {
      out += String(chunk);
      done();
    },
  });
  const code = await runCli(args, {
    stdout: sink,
    stderr: sink,
    stdin: process.stdin,
    env: { PERSYS_ENDPOINT: endpoint, PERSYS_CONFIG: join(runDir(), `no-config-${randomUUID()}.yaml`) },
    now: () => new Date(),
  });
  return { code, out };
}

for (const stores of ["real", "embedded"] as const) {
  describe(`secrets on ${stores === "real" ? "etcd" : "the embedded store"} with a real agent`, () => {
    const id = testId();
    const node = `sec-${id}`;
    const secret = `app-${id}`;
    const value = `v1-${randomUUID()}`;
    const fileValue = `f1-${randomUUID()}`;
    const newValue = `v2-${randomUUID()}`;
    const wid = `sec-${id}`;
    const serverLog = capture();
    const agentLog = capture();
    const config = testConfig({ "reconciler-resync-seconds": "5" }, stores);
    const agentState = mkdtempSync(join(runDir(), `agent-${node}-`));
    let server: RunningServer;
    let agent: NodeAgent;

    const rest = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.httpUrl}${path}`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
    };
    const replica = async (workload: string) =>
      (await rest("GET", `/v1/workloads/${workload}`)).body?.workload?.status?.replicas?.[0];
    const logs = async (workload: string) => (await fetch(`${server.httpUrl}/v1/workloads/${workload}/logs`)).text();

    beforeAll(async () => {
      await requireDocker();
      server = await runServer(config, { logger: pino({ level: "debug" }, serverLog.stream) });
      await server.controlPlane.whenLeader();
      const agentConfig = loadAgentConfig({ flags: agentFlags(node, server.grpcAddress, agentState) });
      agent = await NodeAgent.start(agentConfig, { logger: pino({ level: "debug" }, agentLog.stream) });
      await until("node registered", async () => (await rest("GET", `/v1/nodes/${node}`)).status === 200, 20_000);
    }, 60_000);

    afterAll(async () => {
      await agent?.close();
      await server?.close();
      await cleanupDocker([node]);
    });

    it("delivers env and file values to the container only, rolls on a new value, and refuses delete while used", async () => {
      const put = await rest("PUT", `/v1/secrets/${secret}`, { stringData: { token: value, file: fileValue } });
      expect(put.status).toBe(200);
      expect(put.body.secret).toMatchObject({ name: secret, keys: ["file", "token"], version: 1 });
      expect(put.text).not.toContain(value);
      const again = await rest("PUT", `/v1/secrets/${secret}`, { stringData: { token: value, file: fileValue } });
      expect(again.body).toMatchObject({ secret: { version: 1 } });
      expect(again.body.changed ?? false).toBe(false);

      const applied = await rest("PUT", `/v1/workloads/${wid}`, {
        id: wid,
        kind: "WORKLOAD_KIND_CONTAINER",
        resources: { cpuMillicores: 100, memoryMib: 32 },
        container: {
          image: BUSYBOX_IMAGE,
          command: ["sh", "-c", 'echo "env=$TOKEN"; echo "file=$(cat /run/app/token)"; sleep 3600'],
          secretEnv: { TOKEN: { secret, key: "token" } },
          secretFiles: [{ ref: { secret, key: "file" }, path: "/run/app/token", mode: 0o400 }],
          stopTimeoutSeconds: 1,
        },
      });
      expect(applied.status).toBeLessThan(300);
      await until("running", async () => (await replica(wid))?.state === "REPLICA_STATE_RUNNING", 30_000);
      // The user asked for the value in the log: it is there, through the API.
      const firstLogs = await until("values logged", async () => {
        const text = await logs(wid);
        return text.includes(`env=${value}`) && text.includes(`file=${fileValue}`) ? text : undefined;
      });
      expect(firstLogs).toContain(`env=${value}`);

      // Nowhere else.
      const raw: Buffer[] = [];
      if (stores === "real") {
        const etcd = new Etcd3({ hosts: etcdEndpoints() });
        try {
          const all = await etcd.getAll().prefix(config.state.prefix).buffers();
          expect(Object.keys(all).some((k) => k.includes(`secrets/${secret}`))).toBe(true);
          raw.push(...Object.values(all));
        } finally {
          etcd.close();
        }
      }
      raw.push(bytesUnder(config.dataDir), bytesUnder(agentState));
      const secretDir = join("/dev/shm/persys-agent-secrets", node);
      const events = await rest("GET", `/v1/events?pageSize=1000`);
      const describe = await persysctl(server.grpcAddress, ["describe", "workload", wid]);
      const get = await persysctl(server.grpcAddress, ["get", "workload", wid, "-o", "json"]);
      const secretGet = await persysctl(server.grpcAddress, ["secret", "get", secret, "-o", "yaml"]);
      const secretList = await persysctl(server.grpcAddress, ["secret", "list"]);
      expect(describe.code).toBe(0);
      expect(secretGet.out).toContain("token");
      expect(secretList.out).toContain(secret);
      for (const [where, text] of [
        ["raw store and data dirs", Buffer.concat(raw).toString("latin1")],
        ["events", events.text],
        ["describe", describe.out],
        ["get -o json", get.out],
        ["secret get/list", secretGet.out + secretList.out],
        ["workload via REST", (await rest("GET", `/v1/workloads/${wid}?view=2`)).text],
        ["server log", serverLog.text()],
        ["agent log", agentLog.text()],
      ] as const) {
        expect(text.includes(value), `${where} holds the value`).toBe(false);
        expect(text.includes(fileValue), `${where} holds the file value`).toBe(false);
      }
      expect(serverLog.text().length).toBeGreaterThan(0);
      expect(existsSync(secretDir)).toBe(true);

      // A new value: a new version, the replica is recreated and sees it.
      const before = (await replica(wid)).observedRevision;
      const updated = await rest("PUT", `/v1/secrets/${secret}`, { stringData: { token: newValue, file: fileValue } });
      expect(updated.body).toMatchObject({ secret: { version: 2 }, changed: true });
      await until(
        "rolled to the new value",
        async () => {
          const r = await replica(wid);
          return (
            r?.state === "REPLICA_STATE_RUNNING" &&
            r.observedRevision !== before &&
            (await logs(wid)).includes(`env=${newValue}`)
          );
        },
        30_000,
      );
      expect(serverLog.text().includes(newValue) || agentLog.text().includes(newValue)).toBe(false);

      // Delete is refused while the workload uses it, naming the workload.
      const refused = await rest("DELETE", `/v1/secrets/${secret}`);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: "SECRET_IN_USE" });
      expect(refused.body.message).toContain(wid);

      // The workload goes, and its secret files with it; then the secret can go.
      await rest("DELETE", `/v1/workloads/${wid}`);
      await until("workload gone", async () => (await rest("GET", `/v1/workloads/${wid}`)).status === 404, 30_000);
      await until("secret files removed", () => !existsSync(join(secretDir, `${wid}-0`)));
      expect((await rest("DELETE", `/v1/secrets/${secret}`)).body).toMatchObject({ deleted: true });
      expect((await rest("DELETE", `/v1/secrets/${secret}`)).status).toBe(200);
    }, 120_000);

    it("accepts a workload that references a missing secret; its replica waits with SECRET_NOT_FOUND, then starts", async () => {
      const missing = `later-${id}`;
      const w = `wait-${id}`;
      const applied = await rest("PUT", `/v1/workloads/${w}`, {
        id: w,
        kind: "WORKLOAD_KIND_CONTAINER",
        resources: { cpuMillicores: 100, memoryMib: 32 },
        container: {
          image: BUSYBOX_IMAGE,
          command: ["sh", "-c", 'test -n "$PASSWORD" && echo has-password; sleep 3600'],
          secretEnv: { PASSWORD: { secret: missing, key: "password" } },
          stopTimeoutSeconds: 1,
        },
      });
      expect(applied.status).toBeLessThan(300);
      const waiting = await until("SECRET_NOT_FOUND", async () => {
        const r = await replica(w);
        return r?.reason?.code === "SECRET_NOT_FOUND" ? r : undefined;
      });
      expect(waiting.reason.message).toContain(missing);
      await rest("PUT", `/v1/secrets/${missing}`, { stringData: { password: value } });
      await until(
        "running once the secret exists",
        async () => (await replica(w))?.state === "REPLICA_STATE_RUNNING",
        30_000,
      );
      await rest("DELETE", `/v1/workloads/${w}`);
      await until("workload gone", async () => (await rest("GET", `/v1/workloads/${w}`)).status === 404, 30_000);
      expect(serverLog.text().includes(value) || agentLog.text().includes(value)).toBe(false);
    }, 90_000);
  });
}
