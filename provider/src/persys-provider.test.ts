import { describe, expect, it } from "vitest";
import { CONFIG_KEYS, clientOptionsOf, SECRET_CONFIG_KEYS } from "./config/provider-config.js";
import { autoName, PersysProvider, PROVIDER_VERSION, packageSchema, secretPropertiesOf } from "./persys-provider.js";
import { resourceKinds, SECRET_TYPE } from "./resources/resource-types.js";
import { SECRET_INPUTS, SECRET_OUTPUT_ONLY, SECRET_PROPERTIES } from "./resources/secret-resource.js";
import { OUTPUT_ONLY } from "./resources/workload-outputs.js";

const schema = JSON.parse(packageSchema());

describe("the provider and its package schema", () => {
  it("serves the schema's resources at the schema's version", () => {
    expect(schema.version).toBe(PROVIDER_VERSION);
    expect([...Object.keys(resourceKinds), SECRET_TYPE].sort()).toEqual(Object.keys(schema.resources).sort());
  });

  it("every output-only property is in each workload resource's schema properties", () => {
    for (const type of Object.keys(resourceKinds)) {
      for (const key of OUTPUT_ONLY) expect(schema.resources[type].properties).toHaveProperty([key]);
    }
  });

  it("a Secret's inputs, outputs and secret properties are the schema's", () => {
    const secret = schema.resources[SECRET_TYPE];
    expect(Object.keys(secret.inputProperties).sort()).toEqual([...SECRET_INPUTS].sort());
    expect(Object.keys(secret.properties).sort()).toEqual([...SECRET_INPUTS, ...SECRET_OUTPUT_ONLY].sort());
    expect(secretPropertiesOf(packageSchema())).toEqual({ [SECRET_TYPE]: [...SECRET_PROPERTIES] });
  });

  it("reads the schema's config keys; secrets as the schema marks them", () => {
    expect([...CONFIG_KEYS].sort()).toEqual(Object.keys(schema.config.variables).sort());
    for (const key of SECRET_CONFIG_KEYS) expect(schema.config.variables[key].secret).toBe(true);
  });
});

describe("clientOptionsOf", () => {
  it("explicit config wins over PERSYS_* variables, which fill the rest", () => {
    const env = { PERSYS_ENDPOINT: "10.0.0.1:7070", PERSYS_TOKEN: "from-env", PERSYS_CONFIG: "/nonexistent" };
    expect(clientOptionsOf({ endpoint: "127.0.0.1:17070" }, env)).toMatchObject({
      endpoint: "127.0.0.1:17070",
      token: "from-env",
    });
    expect(clientOptionsOf({}, env)).toMatchObject({ endpoint: "10.0.0.1:7070" });
    expect(clientOptionsOf({ caCert: "/ca.pem" }, { PERSYS_CONFIG: "/nonexistent" }).tls).toEqual({
      caCert: "/ca.pem",
    });
  });

  it("with nothing set, the endpoint is persys up's", () => {
    expect(clientOptionsOf({}, { PERSYS_CONFIG: "/nonexistent" })).toMatchObject({ endpoint: "127.0.0.1:7070" });
  });
});

describe("check", () => {
  const provider = new PersysProvider({ PERSYS_CONFIG: "/nonexistent" });
  const urn = "urn:pulumi:dev::proj::persys:index:Container::Web_Server";

  it("names a workload from the resource name and the engine's seed, and keeps the name on updates", async () => {
    const seed = Buffer.from("seed");
    const first = await provider.check(urn, {}, { image: "nginx:1.27" }, seed);
    expect(first.failures).toEqual([]);
    expect(first.inputs.name).toBe(autoName("Web_Server", seed));
    expect(first.inputs.name).toMatch(/^web-server-[0-9a-f]{7}$/);
    const again = await provider.check(urn, first.inputs, { image: "nginx:1.28" }, Buffer.from("other"));
    expect(again.inputs.name).toBe(first.inputs.name);
  });

  it("returns {property, reason} failures by input name", async () => {
    const { failures } = await provider.check(
      urn,
      {},
      { name: "web", image: "", ports: [{ container: 80, host: 70_000 }], imag: "x" },
      new Uint8Array(),
    );
    expect(failures).toEqual(
      expect.arrayContaining([
        { property: "image", reason: expect.any(String) },
        { property: "ports[0].host", reason: expect.any(String) },
        { property: "imag", reason: "unknown field (did you mean image?)" },
      ]),
    );
  });
});
