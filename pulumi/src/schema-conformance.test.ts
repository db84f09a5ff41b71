/**
 * The classes of `@persys/pulumi` against the package schema (`schema/pulumi/schema.json`): the
 * same type tokens, input names, required inputs, outputs and provider settings; and, through
 * Pulumi's mock runtime, that a resource sends exactly its schema inputs and reads every schema
 * output back.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import {
  COMPOSE_STACK_INPUTS,
  CONTAINER_INPUTS,
  ComposeStack,
  Container,
  PROVIDER_INPUTS,
  SECRET_INPUTS,
  SECRET_OUTPUTS,
  Secret,
  VIRTUAL_MACHINE_INPUTS,
  VirtualMachine,
  WORKLOAD_OUTPUTS,
} from "./index.js";

interface SchemaResource {
  inputProperties: Record<string, unknown>;
  requiredInputs: string[];
  properties: Record<string, unknown>;
}
const schema = JSON.parse(readFileSync(join(import.meta.dirname, "../../schema/pulumi/schema.json"), "utf8"));

const resources = [
  ["persys:index:Container", Container, CONTAINER_INPUTS, WORKLOAD_OUTPUTS],
  ["persys:index:ComposeStack", ComposeStack, COMPOSE_STACK_INPUTS, WORKLOAD_OUTPUTS],
  ["persys:index:VirtualMachine", VirtualMachine, VIRTUAL_MACHINE_INPUTS, WORKLOAD_OUTPUTS],
  ["persys:index:Secret", Secret, SECRET_INPUTS, SECRET_OUTPUTS],
] as const;

describe("@persys/pulumi matches schema/pulumi/schema.json", () => {
  it("declares one class per schema resource", () => {
    expect(resources.map(([token]) => token).sort()).toEqual(Object.keys(schema.resources).sort());
  });

  it.each(resources)("%s: type token, input names and output names", (token, cls, inputs, outputs) => {
    const resource = schema.resources[token] as SchemaResource;
    expect((cls as unknown as { __pulumiType: string }).__pulumiType).toBe(token);
    expect([...inputs].sort()).toEqual(Object.keys(resource.inputProperties).sort());
    expect([...inputs, ...outputs].sort()).toEqual(Object.keys(resource.properties).sort());
  });

  it("required inputs are the ones the Args types require", () => {
    // Compile-time half: these literals type-check only if the required fields are exactly these.
    const container: ConstructorParameters<typeof Container>[1] = { image: "x" };
    const vm: ConstructorParameters<typeof VirtualMachine>[1] = { vcpus: 1, memoryMiB: 512 };
    const compose: ConstructorParameters<typeof ComposeStack>[1] = {};
    const secret: ConstructorParameters<typeof Secret>[1] = { data: {} };
    expect(Object.keys(container!)).toEqual(schema.resources["persys:index:Container"].requiredInputs);
    expect(Object.keys(vm!)).toEqual(schema.resources["persys:index:VirtualMachine"].requiredInputs);
    expect(Object.keys(compose!)).toEqual(schema.resources["persys:index:ComposeStack"].requiredInputs);
    expect(Object.keys(secret!)).toEqual(schema.resources["persys:index:Secret"].requiredInputs);
  });

  it("the provider's settings are the schema's config, clientKey and token secret", () => {
    expect([...PROVIDER_INPUTS].sort()).toEqual(Object.keys(schema.provider.inputProperties).sort());
    expect(Object.keys(schema.config.variables).sort()).toEqual([...PROVIDER_INPUTS].sort());
    const secret = Object.entries(schema.config.variables as Record<string, { secret?: boolean }>)
      .filter(([, v]) => v.secret)
      .map(([k]) => k);
    expect(secret.sort()).toEqual(["clientKey", "token"]);
  });

  it("a Secret's data is secret in inputs and outputs", () => {
    const secret = schema.resources["persys:index:Secret"];
    expect(secret.inputProperties.data.secret).toBe(true);
    expect(secret.properties.data.secret).toBe(true);
  });

  it("every $ref names a type the schema defines", () => {
    const refs = [...JSON.stringify(schema).matchAll(/"#\/types\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) expect(schema.types, ref).toHaveProperty([ref]);
  });
});

describe("resources under Pulumi's mock runtime", () => {
  const registered: { type: string; name: string; inputs: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    await pulumi.runtime.setMocks(
      {
        newResource: (args) => {
          registered.push({ type: args.type, name: args.name, inputs: args.inputs });
          const props = schema.resources[args.type]?.properties ?? {};
          // Echo the inputs and fill every output the schema declares, as the provider does.
          const outputs = Object.fromEntries(Object.keys(props).map((k) => [k, args.inputs[k] ?? `${k}-out`]));
          return { id: `${args.name}-id`, state: outputs };
        },
        call: () => ({}),
      },
      "project",
      "stack",
      false,
    );
  });

  const value = <T>(output: pulumi.Output<T>) => new Promise<T>((ok) => output.apply((v) => ok(v)));

  it("a Container sends only schema inputs and reads back every output", async () => {
    const web = new Container("web", { image: "persys-test/web:1", env: { A: "1" }, ports: [{ container: 8080 }] });
    expect(await value(web.id)).toBe("web-id");
    expect(await value(web.status)).toBe("status-out");
    expect(await value(web.revision)).toBe("revision-out");
    expect(await value(web.image)).toBe("persys-test/web:1");
    const sent = registered.find((r) => r.name === "web")!;
    expect(sent.type).toBe("persys:index:Container");
    const allowed = Object.keys(schema.resources["persys:index:Container"].inputProperties);
    for (const key of Object.keys(sent.inputs)) expect(allowed).toContain(key);
    expect(sent.inputs).toEqual({ image: "persys-test/web:1", env: { A: "1" }, ports: [{ container: 8080 }] });
  });

  it("a VirtualMachine and a ComposeStack register under their tokens", async () => {
    const vm = new VirtualMachine("db", { vcpus: 1, memoryMiB: 512, imageName: "cirros" });
    const stack = new ComposeStack("blog", { inlineYaml: "services: {}\n" });
    expect(await value(vm.memoryMiB)).toBe(512);
    expect(await value(stack.placements)).toBe("placements-out");
    expect(registered.map((r) => r.type)).toEqual(
      expect.arrayContaining(["persys:index:VirtualMachine", "persys:index:ComposeStack"]),
    );
  });

  it("a Secret sends its data as a secret and reads back name, keys and version", async () => {
    const creds = new Secret("creds", { name: "creds", data: { password: "s3cr3t" } });
    expect(await value(creds.id)).toBe("creds-id");
    expect(await value(creds.version)).toBe("version-out");
    expect(await value(creds.data)).toEqual({ password: "s3cr3t" });
    expect(await pulumi.isSecret(creds.data)).toBe(true);
    const sent = registered.find((r) => r.name === "creds")!;
    expect(sent.type).toBe("persys:index:Secret");
    // Sent with Pulumi's secret signature, so the engine encrypts it in the state.
    expect(sent.inputs).toEqual({
      name: "creds",
      data: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: { password: "s3cr3t" } },
    });
  });
});
