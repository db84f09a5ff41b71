import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import {
  buildDomainXml,
  type DomainSpec,
  domainSpecViolations,
  escapeXml,
  parseReplicaMetadata,
  persysReplicaNamespace,
} from "./domain-xml.js";

const spec: DomainSpec = {
  name: "persys-web-0",
  uuid: "0b5e2d0c-7f0e-4d0a-9a51-2f6f6b1f3c11",
  vcpus: 2,
  memoryMiB: 1024,
  accel: "tcg",
  boot: { kind: "disk" },
  disks: [{ path: "/var/lib/persys/vm/web-0/root.qcow2", target: "vda", serial: "root" }],
  seed: { path: "/var/lib/persys/vm/web-0/seed.iso" },
  networks: [{ network: "default", mac: "52:54:00:12:34:56" }],
  console: { logPath: "/var/lib/persys/vm/web-0/console.log" },
  metadata: { workload: "web", replica: "web-0", revision: "3f2a", node: "node-1" },
};

function violations(overrides: Partial<DomainSpec>): string[] {
  return domainSpecViolations({ ...spec, ...overrides }).map((v) => v.path);
}

describe("buildDomainXml", () => {
  it("renders a disk-booted TCG replica", () => {
    const xml = buildDomainXml(spec);
    expect(xml).toMatch(/^<domain type='qemu'>/);
    expect(xml).toContain("<name>persys-web-0</name>");
    expect(xml).toContain("<uuid>0b5e2d0c-7f0e-4d0a-9a51-2f6f6b1f3c11</uuid>");
    expect(xml).toContain("<memory unit='MiB'>1024</memory>");
    expect(xml).toContain("<vcpu placement='static'>2</vcpu>");
    expect(xml).toContain("<type arch='x86_64' machine='q35'>hvm</type>");
    expect(xml).toContain("<boot dev='hd'/>");
    expect(xml).toContain("<source file='/var/lib/persys/vm/web-0/root.qcow2'/>");
    expect(xml).toContain("<target dev='vda' bus='virtio'/>");
    expect(xml).toContain("<driver name='qemu' type='qcow2' discard='unmap'/>");
    expect(xml).toContain("<serial>root</serial>");
    // the seed: a read-only SATA cdrom on q35
    expect(xml).toMatch(
      /<disk type='file' device='cdrom'>[\s\S]*seed\.iso'\/>\s*<target dev='sda' bus='sata'\/>\s*<readonly\/>/,
    );
    expect(xml).toContain("<source network='default'/>");
    expect(xml).toContain("<mac address='52:54:00:12:34:56'/>");
    expect(xml).toContain("<serial type='file'><source path='/var/lib/persys/vm/web-0/console.log' append='on'/>");
    expect(xml).toContain("<console type='file'>");
    expect(xml).not.toContain("<graphics");
    expect(xml).not.toContain("host-passthrough");
    expect(xml).toContain("<on_reboot>restart</on_reboot>");
  });

  it("renders a kernel-booted KVM guest with host CPU passthrough", () => {
    const xml = buildDomainXml({
      ...spec,
      accel: "kvm",
      boot: { kind: "kernel", kernel: "/k/vmlinuz", initrd: "/k/initrd", cmdline: "console=ttyS0 root=/dev/vda" },
    });
    expect(xml).toMatch(/^<domain type='kvm'>/);
    expect(xml).toContain("<cpu mode='host-passthrough' check='none'/>");
    expect(xml).toContain("<kernel>/k/vmlinuz</kernel>");
    expect(xml).toContain("<initrd>/k/initrd</initrd>");
    expect(xml).toContain("<cmdline>console=ttyS0 root=/dev/vda</cmdline>");
    expect(xml).not.toContain("<boot dev=");
  });

  it("puts the seed on IDE for the pc (i440fx) machine", () => {
    expect(buildDomainXml({ ...spec, machine: "pc-i440fx-7.2" })).toContain("<target dev='hdc' bus='ide'/>");
  });

  it("offers an interactive pty console logged by virtlogd", () => {
    const xml = buildDomainXml({ ...spec, console: { logPath: "/v/console.log", mode: "pty" } });
    expect(xml).toContain("<serial type='pty'><log file='/v/console.log' append='on'/>");
    expect(xml).toContain("<console type='pty'><log file='/v/console.log' append='on'/>");
  });

  it("escapes every value", () => {
    const xml = buildDomainXml({
      ...spec,
      boot: { kind: "kernel", kernel: "/k/<v>", cmdline: `a="1" & b='2'` },
      disks: [{ path: "/data/a&b/root.qcow2", target: "vda" }],
      metadata: { workload: `w"&<`, replica: "r'0", revision: ">", node: "n&1" },
    });
    expect(xml).toContain("<kernel>/k/&lt;v&gt;</kernel>");
    expect(xml).toContain("<cmdline>a=&quot;1&quot; &amp; b=&apos;2&apos;</cmdline>");
    expect(xml).toContain("<source file='/data/a&amp;b/root.qcow2'/>");
    expect(xml).toContain("workload='w&quot;&amp;&lt;' replica='r&apos;0' revision='&gt;' node='n&amp;1'");
  });

  it("is deterministic", () => {
    expect(buildDomainXml(spec)).toBe(buildDomainXml({ ...spec }));
  });

  it("throws INVALID_SPEC naming every violation", () => {
    let error: unknown;
    try {
      buildDomainXml({ ...spec, name: "bad/name", vcpus: 0, memoryMiB: 1.5 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_SPEC");
    expect((error as PersysError).details.map((d) => d.path)).toEqual(["name", "vcpus", "memoryMiB"]);
  });

  const cases: { name: string; overrides: Partial<DomainSpec>; path: string }[] = [
    { name: "uppercase uuid", overrides: { uuid: "0B5E2D0C-7F0E-4D0A-9A51-2F6F6B1F3C11" }, path: "uuid" },
    { name: "machine with spaces", overrides: { machine: "q35 -x" }, path: "machine" },
    {
      name: "relative disk path",
      overrides: { disks: [{ path: "root.qcow2", target: "vda" }] },
      path: "disks[0].path",
    },
    {
      name: "disk path with ..",
      overrides: { disks: [{ path: "/a/../etc/shadow", target: "vda" }] },
      path: "disks[0].path",
    },
    { name: "virtio disk named sda", overrides: { disks: [{ path: "/a", target: "sda" }] }, path: "disks[0].target" },
    {
      name: "duplicate targets",
      overrides: {
        disks: [
          { path: "/a", target: "vda" },
          { path: "/b", target: "vda" },
        ],
      },
      path: "disks[1].target",
    },
    {
      name: "sata disk on the seed's slot",
      overrides: { disks: [{ path: "/a", target: "sda", bus: "sata" }] },
      path: "seed",
    },
    { name: "disk boot without disks", overrides: { disks: [] }, path: "disks" },
    {
      name: "multicast MAC",
      overrides: { networks: [{ network: "default", mac: "01:00:5e:00:00:01" }] },
      path: "networks[0].mac",
    },
    {
      name: "malformed MAC",
      overrides: { networks: [{ network: "default", mac: "52:54:00:12:34" }] },
      path: "networks[0].mac",
    },
    { name: "network name with quote", overrides: { networks: [{ network: "a'b" }] }, path: "networks[0].network" },
    { name: "relative console log", overrides: { console: { logPath: "console.log" } }, path: "console.logPath" },
    {
      name: "control character in the cmdline",
      overrides: { boot: { kind: "kernel", kernel: "/k", cmdline: "a\u0001b" } },
      path: "boot.cmdline",
    },
    {
      name: "empty metadata field",
      overrides: { metadata: { workload: "", replica: "r", revision: "1", node: "n" } },
      path: "metadata.workload",
    },
    {
      name: "disk serial with a space",
      overrides: { disks: [{ path: "/a", target: "vda", serial: "a b" }] },
      path: "disks[0].serial",
    },
  ];
  for (const c of cases) {
    it(`rejects ${c.name}`, () => {
      expect(violations(c.overrides)).toContain(c.path);
    });
  }
});

describe("escapeXml", () => {
  it("escapes the five XML special characters", () => {
    expect(escapeXml(`<a href="x">&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
  });
});

describe("parseReplicaMetadata", () => {
  it("reads back what buildDomainXml wrote", () => {
    expect(parseReplicaMetadata(buildDomainXml(spec))).toEqual(spec.metadata);
  });

  it("reads libvirt's re-serialised form (double quotes, other prefix, escaped values)", () => {
    const xml = `<domain type="qemu" id="3">
  <name>x</name>
  <metadata>
    <other:thing xmlns:other="https://example.com/x" a="b"/>
    <p:replica xmlns:p="${persysReplicaNamespace}" node="n1" workload="w&amp;1" replica="r-0" revision="&lt;abc&gt;"/>
  </metadata>
</domain>`;
    expect(parseReplicaMetadata(xml)).toEqual({ workload: "w&1", replica: "r-0", revision: "<abc>", node: "n1" });
  });

  it("ignores domains without Persys metadata, with another namespace, or incomplete", () => {
    expect(parseReplicaMetadata("<domain><name>x</name></domain>")).toBeUndefined();
    expect(
      parseReplicaMetadata(
        `<domain><metadata><persys:replica xmlns:persys="https://persys.dev/xmlns/replica/2" workload="w" replica="r" revision="1" node="n"/></metadata></domain>`,
      ),
    ).toBeUndefined();
    expect(
      parseReplicaMetadata(
        `<domain><metadata><persys:replica xmlns:persys="${persysReplicaNamespace}" workload="w"/></metadata></domain>`,
      ),
    ).toBeUndefined();
  });
});
