// Compares the compiled descriptors of our compat protos with the committed description of the Go
// contract (test-fixtures/wire-contract.json, derived from the fact sheet). Any renumbered, renamed,
// retyped, added or removed field, message, enum value or RPC fails here.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { fromBinary, isFieldSet } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  type FileDescriptorProto,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { agent, control } from "../index.js";

interface ContractField {
  number: number;
  name: string;
  label: "singular" | "repeated" | "map";
  type: string;
  typeName?: string;
  mapKey?: string;
  mapValue?: string;
  oneof?: string;
}
interface ContractMethod {
  name: string;
  inputType: string;
  outputType: string;
  clientStreaming: boolean;
  serverStreaming: boolean;
}
interface ContractPackage {
  package: string;
  services: { name: string; methods: ContractMethod[] }[];
  enums: { name: string; values: { name: string; number: number }[] }[];
  messages: { name: string; fields: ContractField[] }[];
}

const schemaDir = fileURLToPath(new URL("../../", import.meta.url));
const contract: { packages: ContractPackage[] } = JSON.parse(
  readFileSync(new URL("../../test-fixtures/wire-contract.json", import.meta.url), "utf8"),
);

let built: FileDescriptorProto[] | undefined;

/** Compiles schema/proto with buf into a FileDescriptorSet (imports included); once per test file. */
function buildDescriptors(): FileDescriptorProto[] {
  if (built) return built;
  const buf = createRequire(import.meta.url).resolve("@bufbuild/buf/bin/buf");
  const result = spawnSync(
    process.execPath,
    [buf, "build", "--as-file-descriptor-set", "--exclude-source-info", "-o", "-"],
    { cwd: schemaDir, maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0) throw new Error(`buf build failed: ${result.stderr.toString()}`);
  built = fromBinary(FileDescriptorSetSchema, new Uint8Array(result.stdout)).file;
  return built;
}

const strip = (typeName: string) => typeName.replace(/^\./, "");
const scalarName = (type: FieldDescriptorProto_Type) => FieldDescriptorProto_Type[type].toLowerCase();

function normalizeMessage(pkg: string, message: DescriptorProto): ContractPackage["messages"][number] {
  const fullName = `${pkg}.${message.name}`;
  const fields = message.field.map((f): ContractField => {
    const out: ContractField = { number: f.number, name: f.name, label: "singular", type: scalarName(f.type) };
    const entry = message.nestedType.find((n) => `${fullName}.${n.name}` === strip(f.typeName) && n.options?.mapEntry);
    if (entry) {
      const [key, value] = entry.field;
      if (!key || !value) throw new Error(`${fullName}.${f.name}: malformed map entry`);
      Object.assign(out, { label: "map", type: "map", mapKey: scalarName(key.type), mapValue: scalarName(value.type) });
    } else {
      if (f.label === FieldDescriptorProto_Label.REPEATED) out.label = "repeated";
      if (f.type === FieldDescriptorProto_Type.MESSAGE || f.type === FieldDescriptorProto_Type.ENUM) {
        out.typeName = strip(f.typeName);
      }
    }
    if (isFieldSet(f, FieldDescriptorProtoSchema.field.oneofIndex)) {
      out.oneof = message.oneofDecl[f.oneofIndex]?.name ?? `<missing oneof ${f.oneofIndex}>`;
    }
    return out;
  });
  return { name: message.name, fields: fields.sort((a, b) => a.number - b.number) };
}

function normalizeFile(file: FileDescriptorProto): ContractPackage {
  const pkg = file.package;
  return {
    package: pkg,
    services: file.service.map((s) => ({
      name: s.name,
      methods: s.method
        .map((m) => ({
          name: m.name,
          inputType: strip(m.inputType),
          outputType: strip(m.outputType),
          clientStreaming: m.clientStreaming,
          serverStreaming: m.serverStreaming,
        }))
        .sort(byName),
    })),
    enums: file.enumType
      .map((e) => ({ name: e.name, values: e.value.map((v) => ({ name: v.name, number: v.number })) }))
      .sort(byName),
    messages: file.messageType.map((m) => normalizeMessage(pkg, m)).sort(byName),
  };
}

function sortContract(pkg: ContractPackage): ContractPackage {
  return {
    package: pkg.package,
    services: pkg.services.map((s) => ({ name: s.name, methods: [...s.methods].sort(byName) })).sort(byName),
    enums: [...pkg.enums].sort(byName),
    messages: pkg.messages
      .map((m) => ({ name: m.name, fields: [...m.fields].sort((a, b) => a.number - b.number) }))
      .sort(byName),
  };
}

function byName(a: { name: string }, b: { name: string }) {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Persys extends the compat messages only with fields numbered from 1000, named `persys_*` (or
 * `persys`), of message types from persys.api.v1: Go peers skip them as unknown fields, so the wire
 * contract below 1000 stays exactly the Go one.
 */
const EXTENSION_FLOOR = 1000;
const EXTENSION_IMPORT = "persys/api/v1/agent_report.proto";

const PACKAGES = [
  {
    name: "persys.control.v1",
    file: "persys/control/v1/control.proto",
    imports: ["google/protobuf/timestamp.proto", EXTENSION_IMPORT],
  },
  {
    name: "persys.agent.v1",
    file: "persys/agent/v1/agent.proto",
    // `persys_secrets` (field 1001): resolved secret values for the node's replicas.
    imports: [EXTENSION_IMPORT, "persys/api/v1/secret_service.proto"],
  },
];

function withoutExtensions(pkg: ContractPackage): ContractPackage {
  return {
    ...pkg,
    messages: pkg.messages.map((m) => ({ ...m, fields: m.fields.filter((f) => f.number < EXTENSION_FLOOR) })),
  };
}

describe.each(PACKAGES)("$name descriptors match the Go wire contract", ({ name, file: fileName, imports }) => {
  let file: FileDescriptorProto;
  const expected = contract.packages.find((p) => p.package === name);

  beforeAll(() => {
    const files = buildDescriptors().filter((f) => f.package === name);
    expect(files.map((f) => f.name)).toEqual([fileName]);
    file = files[0]!;
  });

  it("has a fixture entry", () => {
    expect(expected).toBeDefined();
  });

  it("is proto3 with only the contract's imports (plus the Persys extension types), no options and no extensions", () => {
    expect(file.syntax).toBe("proto3");
    expect(file.dependency).toEqual(imports);
    expect(file.options).toBeUndefined();
    expect(file.extension).toEqual([]);
  });

  it("has the same services and RPCs (names, types, streaming)", () => {
    expect(normalizeFile(file).services).toEqual(sortContract(expected!).services);
  });

  it("has the same enums and values", () => {
    expect(normalizeFile(file).enums).toEqual(sortContract(expected!).enums);
  });

  it("has the same messages and fields (number, name, type, label, oneof) below the extension floor", () => {
    expect(withoutExtensions(normalizeFile(file)).messages).toEqual(sortContract(expected!).messages);
  });

  it("extends messages only with persys_* fields of persys.api.v1 types, numbered from 1000", () => {
    const extensions = normalizeFile(file).messages.flatMap((m) =>
      m.fields.filter((f) => f.number >= EXTENSION_FLOOR).map((f) => ({ message: m.name, ...f })),
    );
    expect(extensions.length).toBeGreaterThan(0);
    for (const field of extensions) {
      expect(field.name, `${field.message}.${field.name}`).toMatch(/^persys(_[a-z_]+)?$/);
      expect(field.typeName, `${field.message}.${field.name}`).toMatch(/^persys\.api\.v1\./);
      expect(field.oneof, `${field.message}.${field.name}`).toBeUndefined();
    }
    for (const message of expected!.messages) {
      expect(
        message.fields.every((f) => f.number < EXTENSION_FLOOR),
        message.name,
      ).toBe(true);
    }
  });

  it("uses no proto3 optional, defaults, field options or nested types besides map entries", () => {
    for (const message of file.messageType) {
      expect(message.enumType, message.name).toEqual([]);
      expect(
        message.nestedType.every((n) => n.options?.mapEntry === true),
        message.name,
      ).toBe(true);
      for (const field of message.field) {
        expect(field.proto3Optional, `${message.name}.${field.name}`).toBe(false);
        expect(field.options, `${message.name}.${field.name}`).toBeUndefined();
      }
    }
  });
});

describe("generated grpc-js service definitions match the contract", () => {
  const services: Record<string, Record<string, { path: string; requestStream: boolean; responseStream: boolean }>> = {
    "persys.control.v1.AgentControl": control.AgentControlService,
    "persys.agent.v1.AgentService": agent.AgentServiceService,
  };
  const methods = contract.packages.flatMap((p) =>
    p.services.flatMap((s) => s.methods.map((m) => ({ service: `${p.package}.${s.name}`, ...m }))),
  );

  it("covers every service of the contract", () => {
    expect(Object.keys(services).sort()).toEqual([...new Set(methods.map((m) => m.service))].sort());
  });

  it.each(methods)("$service/$name", ({ service, name, clientStreaming, serverStreaming }) => {
    const generated = services[service]!;
    const key = name.charAt(0).toLowerCase() + name.slice(1);
    expect(generated[key]).toMatchObject({
      path: `/${service}/${name}`,
      requestStream: clientStreaming,
      responseStream: serverStreaming,
    });
    expect(Object.keys(generated)).toHaveLength(methods.filter((m) => m.service === service).length);
  });
});
