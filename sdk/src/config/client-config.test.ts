import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readClientConfig, saveContext, useContext } from "./client-config-file.js";
import { discoverClientOptions } from "./client-discovery.js";

function configFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "persys-config-")), "config.yaml");
  writeFileSync(path, text);
  return path;
}

const twoContexts = `# my clusters
currentContext: dev
contexts:
  - name: dev
    endpoint: 127.0.0.1:7070
  - name: prod
    endpoint: https://cp.example:7443
    token: s3cret
    caCert: certs/ca.pem
`;

describe("client config file", () => {
  it("reads contexts, making certificate paths absolute relative to the file", () => {
    const path = configFile(twoContexts);
    const config = readClientConfig(path)!;
    expect(config.currentContext).toBe("dev");
    expect(config.contexts[1]).toEqual({
      name: "prod",
      endpoint: "https://cp.example:7443",
      token: "s3cret",
      caCert: join(path, "..", "certs", "ca.pem"),
      clientCert: undefined,
      clientKey: undefined,
    });
  });

  it("is absent without a file", () => {
    expect(readClientConfig("/nonexistent/config.yaml")).toBeUndefined();
  });

  it("reads a Go persysctl config as a context named default", () => {
    const path = configFile(
      "grpc_endpoint: sched.local:8085\nca_cert_path: /etc/persys/ca.pem\napi_endpoint: http://x\n",
    );
    expect(readClientConfig(path)).toEqual({
      currentContext: "default",
      contexts: [
        {
          name: "default",
          endpoint: "sched.local:8085",
          caCert: "/etc/persys/ca.pem",
          clientCert: undefined,
          clientKey: undefined,
        },
      ],
    });
  });

  it.each([
    {
      name: "an unknown key",
      text: "currentContext: a\nkontexts: []\n",
      message: /kontexts: unknown key.*config.yaml:2/,
    },
    {
      name: "an unknown context key",
      text: "contexts:\n  - name: a\n    endpoint: x\n    tokn: t\n",
      message: /contexts\[0\]\.tokn: unknown key.*:4/,
    },
    {
      name: "a context without endpoint",
      text: "contexts:\n  - name: a\n",
      message: /contexts\[0\]\.endpoint: is required/,
    },
    {
      name: "a duplicate context",
      text: "contexts:\n  - {name: a, endpoint: x}\n  - {name: a, endpoint: y}\n",
      message: /defined twice/,
    },
    { name: "bad YAML", text: "contexts: [\n", message: /config.yaml:/ },
  ])("refuses $name with INVALID_CONFIG naming the line", ({ text, message }) => {
    expect(() => readClientConfig(configFile(text))).toThrow(message);
  });

  it("switches and adds contexts, keeping comments", () => {
    const path = configFile(twoContexts);
    useContext(path, "prod");
    saveContext(path, { name: "staging", endpoint: "10.0.0.5:7070" });
    const text = readFileSync(path, "utf8");
    expect(text).toContain("# my clusters");
    expect(readClientConfig(path)!.currentContext).toBe("prod");
    expect(readClientConfig(path)!.contexts.map((c) => c.name)).toEqual(["dev", "prod", "staging"]);
    expect(() => useContext(path, "nope")).toThrow(/no context "nope".*have: dev, prod, staging/);
  });

  it("creates the file with the first context as current", () => {
    const path = join(mkdtempSync(join(tmpdir(), "persys-config-")), "sub", "config.yaml");
    saveContext(path, { name: "home", endpoint: "nas:7070" });
    expect(readClientConfig(path)).toMatchObject({
      currentContext: "home",
      contexts: [{ name: "home", endpoint: "nas:7070" }],
    });
  });
});

describe("discoverClientOptions", () => {
  const path = configFile(twoContexts);
  it.each([
    {
      name: "nothing set: the file's current context",
      env: {},
      context: undefined,
      overrides: {},
      endpoint: "127.0.0.1:7070",
      source: "context",
    },
    {
      name: "PERSYS_ENDPOINT over the current context",
      env: { PERSYS_ENDPOINT: "env:1" },
      context: undefined,
      overrides: {},
      endpoint: "env:1",
      source: "environment",
    },
    {
      name: "PERSYS_CONTEXT picks a context",
      env: { PERSYS_CONTEXT: "prod" },
      context: undefined,
      overrides: {},
      endpoint: "https://cp.example:7443",
      source: "context",
    },
    {
      name: "an explicit context over PERSYS_ENDPOINT",
      env: { PERSYS_ENDPOINT: "env:1" },
      context: "prod",
      overrides: {},
      endpoint: "https://cp.example:7443",
      source: "context",
    },
    {
      name: "an explicit endpoint over everything",
      env: { PERSYS_ENDPOINT: "env:1" },
      context: "prod",
      overrides: { endpoint: "flag:2" },
      endpoint: "flag:2",
      source: "explicit",
    },
  ])("$name", ({ env, context, overrides, endpoint, source }) => {
    const found = discoverClientOptions({ env, configPath: path, context, overrides });
    expect([found.endpoint, found.endpointSource]).toEqual([endpoint, source]);
  });

  it("takes the token and CA from the chosen context, and PERSYS_TOKEN over a context picked by the file", () => {
    expect(discoverClientOptions({ env: {}, configPath: path, context: "prod" }).options).toMatchObject({
      token: "s3cret",
      tls: { caCert: join(path, "..", "certs", "ca.pem") },
    });
    expect(discoverClientOptions({ env: { PERSYS_TOKEN: "t2" }, configPath: path }).options.token).toBe("t2");
  });

  it("defaults to 127.0.0.1:7070 without any configuration", () => {
    const found = discoverClientOptions({ env: {}, configPath: "/nonexistent/config.yaml" });
    expect([found.endpoint, found.endpointSource, found.options.tls]).toEqual(["127.0.0.1:7070", "default", undefined]);
  });

  it("fails for a context that does not exist", () => {
    expect(() => discoverClientOptions({ env: {}, configPath: path, context: "nope" })).toThrow(/no context "nope"/);
  });
});
