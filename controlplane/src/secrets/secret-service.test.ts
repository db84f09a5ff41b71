import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, PersysError } from "@persys/schema";
import { afterEach, describe, expect, it } from "vitest";
import { ClusterState } from "../cluster/cluster-state.js";
import { ClusterKeys } from "../cluster/keys.js";
import { encodeRecord, type WorkloadRecord } from "../cluster/records.js";
import { openStateStore } from "../state/open-state-store.js";
import type { StateStore } from "../state/state-store.js";
import { secretRevisionSuffix, withSecretRevision } from "./secret-references.js";
import { SecretResolver } from "./secret-resolver.js";
import { defaultSecretSealer } from "./secret-sealer.js";
import { SecretService } from "./secret-service.js";
import { SecretStore } from "./secret-store.js";

const VALUE = "correct-horse-battery-staple";
let opened: { store: StateStore; state: ClusterState }[] = [];

async function setup() {
  const store = await openStateStore({ kind: "embedded", dataDir: mkdtempSync(join(tmpdir(), "persys-secrets-")) });
  const keys = new ClusterKeys("/t/");
  const state = new ClusterState(store, keys);
  await state.start();
  opened.push({ store, state });
  const sealer = await defaultSecretSealer({ dataDir: mkdtempSync(join(tmpdir(), "persys-kek-")) });
  const secrets = new SecretStore(store, keys, sealer);
  return { store, keys, state, secrets, service: new SecretService(state, secrets, () => Date.UTC(2030, 0, 1)) };
}

afterEach(async () => {
  for (const o of opened) {
    await o.state.stop();
    await o.store.close();
  }
  opened = [];
});

const put = (name: string, stringData: Record<string, string>) =>
  api.PutSecretRequest.fromPartial({ name, stringData });

async function storeWorkload(store: StateStore, keys: ClusterKeys, id: string, secret: string) {
  const workload = api.Workload.fromJSON({
    id,
    kind: "WORKLOAD_KIND_CONTAINER",
    container: { image: "busybox:1", secretEnv: { TOKEN: { secret, key: "token" } } },
  });
  const record: WorkloadRecord = {
    workload: api.Workload.toJSON(workload),
    revision: "abc",
    generation: 1,
    createdAt: "2030-01-01T00:00:00Z",
    updatedAt: "2030-01-01T00:00:00Z",
  };
  const { revision } = await store.put(keys.workload(id), encodeRecord(record));
  return { workload, revision };
}

describe("SecretService", () => {
  it("stores only a sealed envelope, keeps the version for the same data and bumps it for new data", async () => {
    const { store, state, service } = await setup();
    const first = await service.putSecret(put("db", { token: VALUE }));
    expect(first).toMatchObject({ created: true, changed: true, secret: { name: "db", keys: ["token"], version: 1 } });
    const raw = await store.range("/t/");
    expect(Buffer.concat(raw.kvs.map((kv) => Buffer.from(kv.value))).toString("latin1")).not.toContain(VALUE);
    expect(await service.putSecret(put("db", { token: VALUE }))).toMatchObject({
      changed: false,
      secret: { version: 1 },
    });
    expect(await service.putSecret(put("db", { token: "other" }))).toMatchObject({
      changed: true,
      secret: { version: 2 },
    });
    expect(JSON.stringify((await service.getSecret({ name: "db" })).secret)).not.toContain(VALUE);
    expect((await service.listSecrets({})).secrets.map((s) => s.name)).toEqual(["db"]);
    expect(state.secrets.get("db")?.value.version).toBe(2);
  });

  it.each<{ name: string; request: api.PutSecretRequest; path: string }>([
    { name: "a bad name", request: put("DB", { a: "x" }), path: "name" },
    { name: "a bad key", request: put("db", { "a/b": VALUE }), path: "stringData.a/b" },
    {
      name: "a key twice",
      request: api.PutSecretRequest.fromPartial({
        name: "db",
        data: { a: Buffer.from("x") },
        stringData: { a: VALUE },
      }),
      path: "stringData.a",
    },
    { name: "more than 1 MiB", request: put("db", { a: "x".repeat(1024 * 1024 + 1) }), path: "data" },
  ])("refuses $name naming the field, never the value", async ({ request, path }) => {
    const { service } = await setup();
    const error = await service.putSecret(request).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_ARGUMENT");
    expect((error as PersysError).details.map((d) => d.path)).toContain(path);
    expect((error as PersysError).message).not.toContain(VALUE);
  });

  it("refuses to delete a secret in use (naming the workload) unless forced; deleting twice succeeds", async () => {
    const { store, keys, state, service } = await setup();
    await service.putSecret(put("db", { token: VALUE }));
    const { revision } = await storeWorkload(store, keys, "api", "db");
    await state.waitFor(revision);
    expect((await service.getSecret({ name: "db" })).secret?.usedBy).toEqual(["api"]);
    await expect(service.deleteSecret({ name: "db", force: false })).rejects.toMatchObject({
      code: "SECRET_IN_USE",
      message: expect.stringContaining("api"),
    });
    expect(await service.deleteSecret({ name: "db", force: true })).toEqual({ deleted: true });
    expect(await service.deleteSecret({ name: "db", force: false })).toEqual({ deleted: false });
    await expect(service.getSecret({ name: "db" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("SecretResolver and the secret revision", () => {
  it("resolves only the referenced keys, and fails SECRET_NOT_FOUND for a missing secret or key", async () => {
    const { store, keys, state, secrets, service } = await setup();
    const { workload, revision } = await storeWorkload(store, keys, "api", "db");
    await state.waitFor(revision);
    const resolver = new SecretResolver(state, secrets);
    await expect(resolver.resolve(workload)).rejects.toMatchObject({ code: "SECRET_NOT_FOUND" });
    const record = state.workloads.get("api")!.value;
    const missing = secretRevisionSuffix(state, record);
    await service.putSecret(put("db", { other: "x" }));
    await expect(resolver.resolve(workload)).rejects.toMatchObject({
      code: "SECRET_NOT_FOUND",
      message: expect.stringContaining("no key token"),
    });
    await service.putSecret(put("db", { token: VALUE, other: "x" }));
    const resolved = await resolver.resolve(workload);
    expect(resolved?.values.map((v) => [v.key, Buffer.from(v.value).toString(), v.version])).toEqual([
      ["token", VALUE, 2],
    ]);
    const present = secretRevisionSuffix(state, record);
    expect(present).toMatch(/^-s[0-9a-f]{8}$/);
    expect(present).not.toBe(missing);
    expect(withSecretRevision("abc-r1.0+b2", present)).toBe(`abc-r1.0${present}+b2`);
    expect(withSecretRevision("abc", "")).toBe("abc");
  });
});
