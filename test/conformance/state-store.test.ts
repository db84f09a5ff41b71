/**
 * Runs the StateStore conformance suite against the real etcd the test command started and against the
 * embedded store in a temporary folder.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedStateStore, EtcdStateStore, openStateStore } from "@persys/controlplane";
import { beforeAll } from "vitest";
import { startPrivateEtcd } from "../support/private-servers.js";
import { etcdEndpoints, runDir } from "../support/services.js";
import { describeStateStore } from "./state-store.conformance.js";

const endpoints = etcdEndpoints();
const namespace = `/persys-test/${process.pid}-${Date.now().toString(36)}/`;

beforeAll(async () => {
  const version = await fetch(`${endpoints[0]}/version`).then((r) => r.json());
  console.info(
    `state store conformance: etcd ${JSON.stringify(version)} at ${endpoints.join(",")}, prefix ${namespace}`,
  );
});

describeStateStore("etcd", {
  open: () => openStateStore({ kind: "etcd", endpoints, prefix: namespace }),
  openExclusive: async () => {
    const server = await startPrivateEtcd();
    const store = await EtcdStateStore.open({ endpoints: server.endpoints });
    return {
      store,
      dispose: async () => {
        await store.close();
        await server.stop();
      },
    };
  },
});

const embeddedDirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(runDir(), "state-embedded-"));
  embeddedDirs.push(dir);
  return dir;
};

describeStateStore("embedded", {
  open: () => openStateStore({ kind: "embedded", dataDir: freshDir() }),
  openExclusive: async () => {
    const dir = freshDir();
    const store = await EmbeddedStateStore.open({ dataDir: dir });
    return {
      store,
      dispose: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
