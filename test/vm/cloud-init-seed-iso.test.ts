/**
 * The NoCloud seed image as cloud-init reads it: volume id `cidata`, the documents under their
 * NoCloud names (Rock Ridge and Joliet), byte for byte, read back with isoinfo without mounting.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSeedIso } from "../../agent/src/runtimes/vm/cloud-init-seed.js";
import { findHostTool, type HostTool, runHostTool } from "../../agent/src/runtimes/vm/host-tool.js";

let dir: string;
let isoinfo: HostTool;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "persys-seed-iso-"));
  isoinfo = await findHostTool(["isoinfo"], "genisoimage");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function isoText(iso: string, ...args: string[]): Promise<string> {
  return (await runHostTool(isoinfo, ["-i", iso, ...args])).stdout;
}

describe("buildSeedIso", () => {
  it("writes a cidata ISO with user-data, meta-data and network-config", async () => {
    const userData = "#cloud-config\nwrite_files:\n  - path: /etc/motd\n    content: 'héllo ✓ & <b>'\n";
    const networkConfig = "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n";
    const seed = await buildSeedIso(
      { instanceId: "web-0-1", hostname: "web-0", userData, metaData: '{"region": "r1"}', networkConfig },
      join(dir, "seed.iso"),
    );
    expect(seed.files).toEqual(["meta-data", "user-data", "network-config"]);
    expect(seed.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(seed.sizeBytes).toBeGreaterThan(0);

    const descriptor = await isoText(seed.path, "-d");
    expect(descriptor).toMatch(/^Volume id: cidata$/m);
    expect(descriptor).toMatch(/Rock Ridge signatures version/);
    expect(descriptor).toMatch(/Joliet with UCS level/);

    const rockRidge = await isoText(seed.path, "-R", "-f");
    expect(rockRidge.split("\n").filter(Boolean).sort()).toEqual(["/meta-data", "/network-config", "/user-data"]);
    const joliet = await isoText(seed.path, "-J", "-f");
    expect(joliet.split("\n").filter(Boolean).sort()).toEqual(["/meta-data", "/network-config", "/user-data"]);

    expect(await isoText(seed.path, "-R", "-x", "/user-data")).toBe(userData);
    expect(await isoText(seed.path, "-R", "-x", "/network-config")).toBe(networkConfig);
    const meta = await isoText(seed.path, "-R", "-x", "/meta-data");
    expect(meta).toContain("instance-id: web-0-1\n");
    expect(meta).toContain("local-hostname: web-0\n");
    expect(meta).toContain("region: r1\n");
  });

  it("replaces an existing image atomically and leaves no scratch files", async () => {
    const path = join(dir, "replace.iso");
    const first = await buildSeedIso({ instanceId: "a-1", hostname: "a", userData: "" }, path);
    const second = await buildSeedIso({ instanceId: "a-2", hostname: "a", userData: "" }, path);
    expect(second.sha256).not.toBe(first.sha256);
    expect(await isoText(path, "-R", "-x", "/meta-data")).toContain("instance-id: a-2");
    expect((await readdir(dir)).filter((name) => name.startsWith("."))).toEqual([]);
  });

  it("builds the same image with xorriso (-as mkisofs) where genisoimage is absent", async () => {
    const tool = await findHostTool(["xorriso"], "xorriso");
    const seed = await buildSeedIso(
      { instanceId: "x-1", hostname: "x", userData: "#!/bin/sh\ntrue\n" },
      join(dir, "x.iso"),
      {
        tool,
      },
    );
    expect(seed.tool).toBe("xorriso");
    expect(await isoText(seed.path, "-d")).toMatch(/^Volume id: cidata$/m);
    expect(await isoText(seed.path, "-R", "-x", "/user-data")).toBe("#!/bin/sh\ntrue\n");
  });
});
