import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffInputs } from "./workload-diff.js";
import { canonicalInputs, type Inputs, inputPathOf, inputsOf, toWorkload } from "./workload-inputs.js";

const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
const envName = fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,8}$/);

/** Valid container inputs, with optional fields present or absent and defaults sometimes spelled out. */
const containerInputs: fc.Arbitrary<Inputs> = fc
  .record(
    {
      name: label,
      image: fc.constantFrom("persys-test/web:1", "nginx:1.27", "registry.example/app@sha256:" + "a".repeat(64)),
      replicas: fc.integer({ min: 0, max: 5 }),
      cpuMillicores: fc.integer({ min: 0, max: 4000 }),
      memoryMiB: fc.integer({ min: 0, max: 4096 }),
      env: fc.dictionary(envName, fc.string({ maxLength: 8 }), { maxKeys: 4 }),
      labels: fc.dictionary(label, label, { maxKeys: 3 }),
      command: fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 3 }),
      ports: fc.uniqueArray(
        fc.record(
          {
            container: fc.integer({ min: 1, max: 65_535 }),
            host: fc.integer({ min: 1024, max: 65_535 }),
            protocol: fc.constantFrom("tcp", "udp"),
          },
          { requiredKeys: ["container"] },
        ),
        { maxLength: 3, selector: (p) => `${p.container}/${p.protocol ?? "tcp"}` },
      ),
      restart: fc.oneof(
        fc.record({ mode: fc.constantFrom("no", "always", "unless-stopped") }),
        fc.record({ mode: fc.constant("on-failure"), maxRetries: fc.integer({ min: 0, max: 5 }) }),
      ),
      desiredState: fc.constantFrom("running", "stopped"),
      stopTimeoutSeconds: fc.integer({ min: 0, max: 60 }),
      update: fc.record({
        strategy: fc.constantFrom("rolling", "recreate"),
        maxUnavailable: fc.integer({ min: 1, max: 3 }),
      }),
    },
    { requiredKeys: ["name", "image"] },
  )
  .filter((x) => {
    const hostPorts = ((x.ports as { host?: number; protocol?: string }[] | undefined) ?? [])
      .filter((p) => p.host !== undefined)
      .map((p) => `${p.host}/${p.protocol ?? "tcp"}`);
    return new Set(hostPorts).size === hostPorts.length;
  });

const empty = { changes: false, replaces: [], deleteBeforeReplace: false, detailedDiff: {} };

describe("diffInputs", () => {
  it("diff(x, x) is empty for any valid container (property)", () => {
    fc.assert(
      fc.property(containerInputs, (x) => {
        const c = canonicalInputs("container", x);
        expect(diffInputs("container", c, c)).toEqual(empty);
      }),
      { numRuns: 300 },
    );
  });

  it("canonical inputs are a fixed point and describe the same workload (property)", () => {
    fc.assert(
      fc.property(containerInputs, (x) => {
        const c = canonicalInputs("container", x);
        expect(canonicalInputs("container", c)).toEqual(c);
        expect(toWorkload("container", c)).toEqual(toWorkload("container", inputsOf(toWorkload("container", x))));
      }),
      { numRuns: 300 },
    );
  });

  it("ports in another order and defaults spelled out are no change (property)", () => {
    fc.assert(
      fc.property(containerInputs, (x) => {
        const spelled = {
          ...x,
          replicas: x.replicas ?? 1,
          restart: x.restart ?? { mode: "on-failure", maxRetries: 0 },
          ports: [...((x.ports as Inputs[] | undefined) ?? [])].reverse().map((p) => ({ protocol: "tcp", ...p })),
          desiredState: x.desiredState ?? "running",
          stopTimeoutSeconds: x.stopTimeoutSeconds || 10,
        };
        const d = diffInputs("container", canonicalInputs("container", x), canonicalInputs("container", spelled));
        expect(d).toEqual(empty);
      }),
      { numRuns: 200 },
    );
  });

  const base = canonicalInputs("container", { name: "web", image: "persys-test/web:1", env: { A: "1" } });

  it.each([
    [
      "an env change updates in place",
      { ...base, env: { A: "2" } },
      { changes: true, replaces: [], deleteBeforeReplace: false, detailedDiff: { "env.A": "UPDATE" } },
    ],
    [
      "a new env var is an ADD",
      { ...base, env: { A: "1", B: "x" } },
      { changes: true, replaces: [], deleteBeforeReplace: false, detailedDiff: { "env.B": "ADD" } },
    ],
    [
      "a new name replaces, creating the new one first",
      { ...base, name: "web2" },
      { changes: true, replaces: ["name"], deleteBeforeReplace: false, detailedDiff: { name: "UPDATE_REPLACE" } },
    ],
    [
      "a new name with a fixed host port deletes the old one first",
      { ...base, name: "web2", ports: [{ container: 8080, host: 18080 }] },
      {
        changes: true,
        replaces: ["name"],
        deleteBeforeReplace: true,
        detailedDiff: { name: "UPDATE_REPLACE", ports: "ADD" },
      },
    ],
  ])("%s", (_name, news, expected) => {
    expect(diffInputs("container", base, canonicalInputs("container", news))).toEqual(expected);
  });

  it("a VM's disks are immutable; keeping the id, the old VM is deleted first", () => {
    const olds = canonicalInputs("vm", {
      name: "db",
      vcpus: 1,
      memoryMiB: 512,
      imageName: "cirros",
      disks: [{ name: "root", sizeGiB: 1, boot: true }],
    });
    const news = canonicalInputs("vm", { ...olds, disks: [{ name: "root", sizeGiB: 2, boot: true }] });
    expect(diffInputs("vm", olds, news)).toEqual({
      changes: true,
      replaces: ["disks"],
      deleteBeforeReplace: true,
      detailedDiff: { "disks[0].sizeGiB": "UPDATE_REPLACE" },
    });
    // The reservation follows the disks (sum of sizes) and is not an input of its own.
    expect(news.diskGiB).toBeUndefined();
  });

  it("an unknown value (preview) is a change of its property", () => {
    const news = { ...base, image: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" };
    expect(diffInputs("container", base, news)).toMatchObject({ changes: true, detailedDiff: { image: "UPDATE" } });
  });
});

describe("inputPathOf", () => {
  it.each([
    ["container.ports[0].hostPort", "ports[0].host"],
    ["container.image", "image"],
    ["resources.memoryMib", "memoryMiB"],
    ["id", "name"],
    ["vm.disks[1].sizeGib", "disks[1].sizeGiB"],
    ["placement.requiredNodeAffinity[0].operator", "placement.requiredNodeAffinity[0].operator"],
  ])("%s → %s", (api, input) => expect(inputPathOf(api)).toBe(input));
});
