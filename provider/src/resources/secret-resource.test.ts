import type { PersysClient } from "@persys/sdk";
import { PersysError } from "@persys/sdk";
import { describe, expect, it } from "vitest";
import { PersysProvider } from "../persys-provider.js";
import { UNKNOWN } from "../plugin/property-values.js";
import {
  checkSecretInputs,
  diffSecretInputs,
  NOT_READABLE,
  SecretLifecycle,
  secretInputPart,
} from "./secret-resource.js";

const urn = "urn:pulumi:dev::proj::persys:index:Secret::Db_Creds";

describe("checkSecretInputs", () => {
  it.each([
    [
      "a bad name",
      { name: "Bad_Name", data: { a: "1" } },
      [{ property: "name", reason: expect.stringMatching(/DNS-1123/) }],
    ],
    ["no data", { name: "db" }, [{ property: "data", reason: "is required" }]],
    ["data not a map", { name: "db", data: ["x"] }, [{ property: "data", reason: "must be a map of strings" }]],
    [
      "a bad key",
      { name: "db", data: { "bad key": "v" } },
      [{ property: 'data["bad key"]', reason: expect.any(String) }],
    ],
    ["a non-string value", { name: "db", data: { n: 1 } }, [{ property: "data.n", reason: "must be a string" }]],
    ["an unknown field", { name: "db", data: {}, dta: {} }, [{ property: "dta", reason: "unknown field" }]],
    [
      "more than 1 MiB",
      { name: "db", data: { a: "x".repeat(1024 * 1024), b: "y" } },
      [{ property: "data", reason: expect.stringMatching(/limit is 1048576/) }],
    ],
  ])("refuses %s, naming the field", (_case, inputs, failures) => {
    expect(checkSecretInputs(inputs).failures).toEqual(failures);
  });

  it("never puts a value in a reason", () => {
    const value = "hunter2-value";
    const { failures } = checkSecretInputs({ name: "Bad", data: { "bad key": value, ok: value } });
    expect(failures.length).toBeGreaterThan(0);
    expect(JSON.stringify(failures)).not.toContain(value);
  });

  it("returns canonical inputs: data keys sorted", () => {
    const { inputs, failures } = checkSecretInputs({ name: "db", data: { b: "2", "tls.crt": "c", a: "1" } });
    expect(failures).toEqual([]);
    expect(JSON.stringify(inputs)).toBe(JSON.stringify({ name: "db", data: { a: "1", b: "2", "tls.crt": "c" } }));
  });

  it("the provider names a secret from the resource name and keeps the name on updates", async () => {
    const provider = new PersysProvider({ PERSYS_CONFIG: "/nonexistent" });
    const first = await provider.check(urn, {}, { data: { password: "p" } }, Buffer.from("seed"));
    expect(first.failures).toEqual([]);
    expect(first.inputs.name).toMatch(/^db-creds-[0-9a-f]{7}$/);
    const again = await provider.check(urn, first.inputs, { data: { password: "q" } }, Buffer.from("other"));
    expect(again.inputs.name).toBe(first.inputs.name);
    expect(provider.secretProperties(urn)).toEqual(["data"]);
    expect(provider.secretProperties("urn:pulumi:dev::proj::persys:index:Container::web")).toEqual([]);
  });
});

describe("diffSecretInputs", () => {
  const olds = { name: "db", data: { password: "p", user: "u" } };
  it.each([
    ["the same inputs", olds, {}, []],
    ["a changed value", { ...olds, data: { password: "q", user: "u" } }, { "data.password": "UPDATE" }, []],
    ["an added key", { ...olds, data: { ...olds.data, "tls.key": "k" } }, { 'data["tls.key"]': "ADD" }, []],
    ["a removed key", { ...olds, data: { password: "p" } }, { "data.user": "DELETE" }, []],
    ["unknown data (preview)", { ...olds, data: UNKNOWN }, { data: "UPDATE" }, []],
    ["a new name", { ...olds, name: "db2" }, { name: "UPDATE_REPLACE" }, ["name"]],
  ])("%s", (_case, news, detailedDiff, replaces) => {
    const diff = diffSecretInputs(olds, news);
    expect(diff.detailedDiff).toEqual(detailedDiff);
    expect(diff.replaces).toEqual(replaces);
    expect(diff.changes).toBe(Object.keys(detailedDiff).length > 0);
    expect(diff.deleteBeforeReplace).toBe(false);
  });

  it("stored outputs diff as their inputs (keys and version are output-only)", () => {
    expect(diffSecretInputs(secretInputPart({ ...olds, keys: ["password", "user"], version: 3 }), olds).changes).toBe(
      false,
    );
  });
});

/** A `client.secrets` stand-in holding secrets in memory (values never leave it but through put). */
function fakeClient(initial: Record<string, { keys: string[]; version: number }> = {}) {
  const store = new Map(Object.entries(initial));
  const notFound = (name: string) => new PersysError("NOT_FOUND", `secret ${name} not found`);
  const meta = (name: string) => ({ name, ...store.get(name)!, usedBy: [] });
  const secrets = {
    put: async (name: string, values: Record<string, string>) => {
      const old = store.get(name);
      store.set(name, { keys: Object.keys(values).sort(), version: (old?.version ?? 0) + 1 });
      return { secret: meta(name), created: !old, changed: true };
    },
    get: async (name: string) => {
      if (!store.has(name)) throw notFound(name);
      return meta(name);
    },
    delete: async (name: string) => store.delete(name),
  };
  return { client: { secrets } as unknown as PersysClient, store };
}

describe("SecretLifecycle", () => {
  it("create puts and returns keys and version; an existing secret is refused with how to import it", async () => {
    const { client } = fakeClient({ taken: { keys: ["a"], version: 1 } });
    const life = new SecretLifecycle(client);
    expect(await life.create({ name: "db", data: { b: "2", a: "1" } })).toEqual({
      id: "db",
      outs: { name: "db", data: { b: "2", a: "1" }, keys: ["a", "b"], version: 1 },
    });
    await expect(life.create({ name: "taken", data: { a: "x" } })).rejects.toThrow(
      /already exists.*pulumi import persys:index:Secret <name> taken/,
    );
  });

  it.each([
    [
      "in step: data from the state",
      { keys: ["a", "b"], version: 2 },
      { name: "s", data: { a: "1", b: "2" }, keys: ["a", "b"], version: 2 },
      { a: "1", b: "2" },
    ],
    [
      "a key removed outside Pulumi: dropped (the next up adds it back)",
      { keys: ["a"], version: 2 },
      { name: "s", data: { a: "1", b: "2" }, keys: ["a", "b"], version: 2 },
      { a: "1" },
    ],
    [
      "a key added outside Pulumi: not readable (the next up removes it)",
      { keys: ["a", "b", "c"], version: 2 },
      { name: "s", data: { a: "1", b: "2" }, keys: ["a", "b"], version: 2 },
      { a: "1", b: "2", c: NOT_READABLE },
    ],
    [
      "the version moved on without Pulumi: every value not readable",
      { keys: ["a", "b"], version: 5 },
      { name: "s", data: { a: "1", b: "2" }, keys: ["a", "b"], version: 2 },
      { a: NOT_READABLE, b: NOT_READABLE },
    ],
    ["import (no state): every value not readable", { keys: ["a"], version: 1 }, {}, { a: NOT_READABLE }],
  ])("read, %s", async (_case, server, state, data) => {
    const life = new SecretLifecycle(fakeClient({ s: server }).client);
    const found = await life.read("s", state);
    expect(found?.inputs).toEqual({ name: "s", data });
    expect(found?.outs).toEqual({ name: "s", data, keys: server.keys, version: server.version });
  });

  it("read of a deleted secret is undefined; delete is idempotent", async () => {
    const { client, store } = fakeClient({ s: { keys: ["a"], version: 1 } });
    const life = new SecretLifecycle(client);
    await life.delete("s");
    await life.delete("s");
    expect(store.has("s")).toBe(false);
    expect(await life.read("s", { name: "s", data: { a: "1" } })).toBeUndefined();
  });
});
