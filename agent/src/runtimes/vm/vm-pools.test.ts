import { describe, expect, it } from "vitest";
import { parseVolList, VmPools } from "./vm-pools.js";

describe("VM storage pool helpers", () => {
  it("parses virsh vol-list (with and without its header)", () => {
    const text = [
      " Name                      Path",
      "-------------------------------------------------------------",
      " web-0.n1_root.qcow2       /var/lib/persys-agent/vm/pools/disks/web-0.n1_root.qcow2",
      " web-0.n1_seed.iso         /var/lib/persys-agent/vm/pools/disks/web-0.n1_seed.iso",
      "",
    ].join("\n");
    expect(parseVolList(text)).toEqual([
      { name: "web-0.n1_root.qcow2", path: "/var/lib/persys-agent/vm/pools/disks/web-0.n1_root.qcow2" },
      { name: "web-0.n1_seed.iso", path: "/var/lib/persys-agent/vm/pools/disks/web-0.n1_seed.iso" },
    ]);
    expect(parseVolList(" base-0123456789abcdef.qcow2   /p/base-0123456789abcdef.qcow2\n")).toHaveLength(1);
  });

  it.each([
    ["a disk of this node", "web-0.n1_root.qcow2", ".n1", "web-0.n1"],
    ["a seed", "db-2.n1_seed.iso", ".n1", "db-2.n1"],
    ["a node id with an underscore", "web-0.n_1_data.raw", ".n_1", "web-0.n_1"],
    ["another node's volume", "web-0.n2_root.qcow2", ".n1", undefined],
    ["not a replica volume", "scratch.qcow2", ".n1", undefined],
  ])("domainOfVolume: %s", (_name, volume, suffix, domain) => {
    expect(VmPools.domainOfVolume(volume, suffix)).toBe(domain);
  });

  it("names a replica's volumes <domain>_<file>", () => {
    expect(VmPools.volumeName("web-0.n1", "root.qcow2")).toBe("web-0.n1_root.qcow2");
  });
});
