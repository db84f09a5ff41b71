import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  buildSeedIso,
  findSeedIsoTool,
  maxSeedDocumentBytes,
  renderSeedFiles,
  type SeedInput,
} from "./cloud-init-seed.js";

const base: SeedInput = { instanceId: "web-0-3f2a", hostname: "web-0", userData: "#cloud-config\nruncmd: [[true]]\n" };

function violationsOf(input: SeedInput): { path: string; reason: string }[] {
  try {
    renderSeedFiles(input);
  } catch (error) {
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_SPEC");
    return [...(error as PersysError).details];
  }
  return [];
}

describe("renderSeedFiles", () => {
  it("writes instance-id and local-hostname into meta-data and passes user-data verbatim", () => {
    const files = renderSeedFiles(base);
    expect(parseYaml(files["meta-data"])).toEqual({ "instance-id": "web-0-3f2a", "local-hostname": "web-0" });
    expect(files["user-data"]).toBe(base.userData);
    expect(files["network-config"]).toBeUndefined();
  });

  it("keeps extra meta-data keys (YAML or JSON) but owns instance-id and local-hostname", () => {
    const yaml = renderSeedFiles({ ...base, metaData: "instance-id: theirs\nregion: edge-1\n" });
    expect(parseYaml(yaml["meta-data"])).toEqual({
      "instance-id": "web-0-3f2a",
      "local-hostname": "web-0",
      region: "edge-1",
    });
    const json = renderSeedFiles({ ...base, metaData: '{"public-keys": ["ssh-ed25519 AAAA"]}' });
    expect(parseYaml(json["meta-data"])["public-keys"]).toEqual(["ssh-ed25519 AAAA"]);
  });

  it("quotes an instance id that YAML would read as a number", () => {
    const files = renderSeedFiles({ ...base, instanceId: "1234" });
    expect(parseYaml(files["meta-data"])["instance-id"]).toBe("1234");
  });

  it("adds network-config only when given", () => {
    const network = "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n";
    expect(renderSeedFiles({ ...base, networkConfig: network })["network-config"]).toBe(network);
    expect(renderSeedFiles({ ...base, networkConfig: "  " })["network-config"]).toBeUndefined();
    const wrapped = "network:\n  version: 1\n  config: []\n";
    expect(renderSeedFiles({ ...base, networkConfig: wrapped })["network-config"]).toBe(wrapped);
  });

  it("accepts user-data that is not cloud-config (a script) without parsing it", () => {
    expect(renderSeedFiles({ ...base, userData: "#!/bin/sh\necho 'a: [b'\n" })["user-data"]).toContain("#!/bin/sh");
    expect(renderSeedFiles({ ...base, userData: "" })["user-data"]).toBe("");
  });

  const cases: { name: string; input: SeedInput; path: string; reason: RegExp }[] = [
    { name: "empty instance id", input: { ...base, instanceId: "" }, path: "instanceId", reason: /1-128/ },
    { name: "instance id with a space", input: { ...base, instanceId: "a b" }, path: "instanceId", reason: /letters/ },
    { name: "uppercase hostname", input: { ...base, hostname: "Web" }, path: "hostname", reason: /RFC 1123/ },
    { name: "hostname with newline", input: { ...base, hostname: "a\nb" }, path: "hostname", reason: /RFC 1123/ },
    {
      name: "oversized user-data",
      input: { ...base, userData: "x".repeat(maxSeedDocumentBytes + 1) },
      path: "cloudInit.userData",
      reason: /at most 262144/,
    },
    {
      name: "documents too large together",
      input: { ...base, userData: "x".repeat(200_000), metaData: `k: ${"y".repeat(100_000)}` },
      path: "cloudInit",
      reason: /add up to/,
    },
    {
      name: "broken cloud-config",
      input: { ...base, userData: "#cloud-config\nruncmd: [oops\n" },
      path: "cloudInit.userData",
      reason: /not valid YAML/,
    },
    {
      name: "meta-data that is a list",
      input: { ...base, metaData: "- a\n- b\n" },
      path: "cloudInit.metaData",
      reason: /mapping/,
    },
    {
      name: "network-config without version",
      input: { ...base, networkConfig: "ethernets: {}\n" },
      path: "cloudInit.networkConfig",
      reason: /version/,
    },
    {
      name: "NUL in user-data",
      input: { ...base, userData: "#!/bin/sh\n\u0000" },
      path: "cloudInit.userData",
      reason: /NUL/,
    },
  ];
  for (const c of cases) {
    it(`rejects ${c.name}`, () => {
      const violations = violationsOf(c.input);
      expect(violations.map((v) => v.path)).toContain(c.path);
      expect(violations.find((v) => v.path === c.path)?.reason).toMatch(c.reason);
    });
  }

  it("names every offending field at once", () => {
    const paths = violationsOf({ ...base, instanceId: "", hostname: "_", metaData: "[1]" }).map((v) => v.path);
    expect(paths).toEqual(["instanceId", "hostname", "cloudInit.metaData"]);
  });
});

describe("seed ISO tool lookup", () => {
  let emptyDir: string;
  beforeAll(async () => {
    emptyDir = await mkdtemp(join(tmpdir(), "persys-seed-path-"));
    await writeFile(join(emptyDir, "genisoimage"), "not executable", { mode: 0o644 });
  });
  afterAll(() => rm(emptyDir, { recursive: true, force: true }));

  it("fails with RUNTIME_UNAVAILABLE naming genisoimage when no ISO tool is on PATH", async () => {
    const error = await findSeedIsoTool(emptyDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("RUNTIME_UNAVAILABLE");
    expect((error as PersysError).message).toMatch(/genisoimage or mkisofs or xorriso is not installed.*genisoimage/);
  });

  it("checks the input before looking for the tool or writing anything", async () => {
    const error = await buildSeedIso({ ...base, hostname: "" }, join(emptyDir, "seed.iso"), {
      tool: { name: "genisoimage", path: join(emptyDir, "genisoimage") },
    }).catch((e: unknown) => e);
    expect((error as PersysError).code).toBe("INVALID_SPEC");
  });
});
