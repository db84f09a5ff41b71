// Wire fixtures for persys.control.v1 workload submission (the WorkloadSpec oneof, ApplyWorkload),
// built by hand from the field numbers of the fact sheet (never with the generated encoder). These
// are the bytes persys-gateway and persysctl send.
import { describe, expect, it } from "vitest";
import { control } from "../index.js";
import { concat, hex, mapEntry, messageField, stringField, varintField } from "./test-support/hand-wire.js";

describe("control WorkloadSpec oneof workload (members 10, 11, 12)", () => {
  const managedVolume = messageField(
    8,
    stringField(1, "data"),
    stringField(2, "local"),
    varintField(3, 10),
    stringField(4, "rwo"),
    stringField(5, "ext4"),
    stringField(6, "/data"),
    varintField(7, true),
    stringField(8, "Retain"),
  );
  const managedVolumeValue: control.ManagedVolumeSpec = {
    name: "data",
    driver: "local",
    sizeGb: 10,
    accessMode: "rwo",
    fsType: "ext4",
    mountPath: "/data",
    readOnly: true,
    retainPolicy: "Retain",
  };
  const resources = messageField(2, varintField(1, 500), varintField(2, 256), varintField(3, 2));
  const resourcesValue = { cpuMillicores: 500, memoryMb: 256, diskGb: 2 };

  const cases: { name: string; bytes: Uint8Array; expected: control.WorkloadSpec }[] = [
    {
      name: "container = 10",
      bytes: concat(
        stringField(1, "container"),
        resources,
        messageField(
          10,
          stringField(1, "nginx:1.27"),
          stringField(2, "nginx"), // command
          stringField(2, "-g"),
          mapEntry(3, "MODE", "prod"), // env is field 3 in control
          messageField(4, stringField(1, "/srv"), stringField(2, "/usr/share/nginx/html"), varintField(3, true)),
          messageField(5, varintField(1, 8080), varintField(2, 80), stringField(3, "tcp")),
          stringField(6, "always"),
          varintField(7, true),
          managedVolume,
        ),
        mapEntry(20, "owner", "team-a"),
      ),
      expected: {
        type: "container",
        resources: resourcesValue,
        workload: {
          $case: "container",
          value: {
            image: "nginx:1.27",
            command: ["nginx", "-g"],
            env: { MODE: "prod" },
            volumes: [{ hostPath: "/srv", containerPath: "/usr/share/nginx/html", readOnly: true }],
            ports: [{ hostPort: 8080, containerPort: 80, protocol: "tcp" }],
            restartPolicy: "always",
            privileged: true,
            managedVolumes: [managedVolumeValue],
          },
        },
        metadata: { owner: "team-a" },
      },
    },
    {
      name: "compose = 11",
      bytes: concat(
        stringField(1, "compose"),
        messageField(
          11,
          stringField(1, "git"),
          stringField(2, "https://git.example/app.git"),
          stringField(3, "v2"),
          stringField(4, "services: {}"),
          mapEntry(5, "TAG", "v2"),
        ),
      ),
      expected: {
        type: "compose",
        workload: {
          $case: "compose",
          value: {
            sourceType: "git",
            gitRepo: "https://git.example/app.git",
            gitRef: "v2",
            inlineYaml: "services: {}",
            env: { TAG: "v2" },
          },
        },
        metadata: {},
      },
    },
    {
      name: "vm = 12",
      bytes: concat(
        stringField(1, "vm"),
        messageField(
          12,
          varintField(1, 2), // vcpus
          varintField(2, 2_048), // memory_mb
          messageField(3, stringField(1, "default"), varintField(2, 20), stringField(3, "vda")), // disks
          messageField(4, stringField(1, "virbr0"), varintField(2, true), stringField(3, "10.0.0.9")), // networks
          messageField(
            5, // cloud_init
            stringField(1, "#cloud-config\n"),
            stringField(2, "instance-id: vm1\n"),
            stringField(3, "version: 2\n"),
            stringField(4, "vendor"),
          ),
          stringField(6, "debian-12"),
          messageField(7, stringField(1, "scratch"), varintField(3, 5)),
        ),
      ),
      expected: {
        type: "vm",
        workload: {
          $case: "vm",
          value: {
            vcpus: 2,
            memoryMb: 2_048,
            disks: [{ poolName: "default", sizeGb: 20, mountPoint: "vda" }],
            networks: [{ bridge: "virbr0", dhcp: true, staticIp: "10.0.0.9" }],
            cloudInit: {
              userData: "#cloud-config\n",
              metaData: "instance-id: vm1\n",
              networkConfig: "version: 2\n",
              vendorData: "vendor",
            },
            osImage: "debian-12",
            managedVolumes: [
              {
                name: "scratch",
                driver: "",
                sizeGb: 5,
                accessMode: "",
                fsType: "",
                mountPath: "",
                readOnly: false,
                retainPolicy: "",
              },
            ],
          },
        },
        metadata: {},
      },
    },
  ];

  it.each(cases)("decodes $name", ({ bytes, expected }) => {
    expect(control.WorkloadSpec.decode(bytes)).toEqual(expected);
  });

  it.each(cases)("encodes $name to the hand-built bytes", ({ bytes, expected }) => {
    expect(hex(control.WorkloadSpec.encode(expected).finish())).toBe(hex(bytes));
  });
});

describe("control ApplyWorkloadRequest (fields 1, 2, 10, 11)", () => {
  it("decodes workload id, spec, revision and desired state", () => {
    const bytes = concat(
      stringField(1, "web"),
      messageField(2, stringField(1, "container"), messageField(10, stringField(1, "nginx:1.27"))),
      stringField(10, "rev-3f2a"),
      stringField(11, "Stopped"),
    );
    expect(control.ApplyWorkloadRequest.decode(bytes)).toEqual({
      workloadId: "web",
      spec: {
        type: "container",
        workload: {
          $case: "container",
          value: {
            image: "nginx:1.27",
            command: [],
            env: {},
            volumes: [],
            ports: [],
            restartPolicy: "",
            privileged: false,
            managedVolumes: [],
          },
        },
        metadata: {},
      },
      revisionId: "rev-3f2a",
      desiredState: "Stopped",
    } satisfies control.ApplyWorkloadRequest);
  });

  it("decodes a desired-state-only change (no spec)", () => {
    const decoded = control.ApplyWorkloadRequest.decode(concat(stringField(1, "web"), stringField(11, "Running")));
    expect(decoded.spec).toBeUndefined();
    expect(decoded.desiredState).toBe("Running");
  });
});
