// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Compose interpolation syntax (${VAR}) inside plain strings
import { describe, expect, it } from "vitest";
import { PersysError } from "../errors/persys-error.js";
import { serviceConfigHash } from "./compose-hash.js";
import { type ComposeSource, parseCompose, readCompose } from "./compose-parser.js";
import { stackHostPorts, stackResources } from "./compose-resources.js";
import { parseDotenv } from "./dotenv.js";
import { interpolate } from "./interpolation.js";

const parse = (content: string, extra: Partial<ComposeSource> = {}) =>
  parseCompose({ file: "compose.yaml", content, ...extra });

function violations(content: string, extra: Partial<ComposeSource> = {}) {
  const result = readCompose({ file: "compose.yaml", content, ...extra });
  if (result.ok) throw new Error("expected the file to be refused");
  return result.violations;
}

const stack = `
x-common: &common
  image: persys-test/busybox:1
  restart: unless-stopped
  labels:
    tier: backend
services:
  db:
    <<: *common
    command: ["sh", "-c", "touch /tmp/ready; sleep 1000"]
    healthcheck:
      test: ["CMD", "test", "-f", "/tmp/ready"]
      interval: 1s
      timeout: 1s
      retries: 3
      start_period: 500ms
    deploy:
      resources:
        limits: { cpus: "0.5", memory: 256m }
        reservations: { memory: 128m }
    volumes: ["data:/data"]
  api:
    <<: *common
    command: sleep 1000
    environment:
      MODE: \${MODE:-prod}
      TOKEN:
    depends_on:
      db: { condition: service_healthy }
    deploy:
      replicas: 2
      resources: { limits: { cpus: 0.25, memory: 64m } }
  web:
    image: persys-test/web:1
    ports: ["\${WEB_PORT:-18080}:8080", "127.0.0.1:9090:9090/udp"]
    depends_on: [api]
volumes:
  data: {}
`;

describe("parseCompose", () => {
  it("reads anchors and merges, interpolates with defaults and puts services in dependency order", () => {
    const p = parse(stack, { env: { TOKEN: "t0k" } });
    expect(p.services.map((s) => s.name)).toEqual(["db", "api", "web"]);
    const api = p.services[1]!;
    expect(api.image).toBe("persys-test/busybox:1");
    expect(api.restart).toBe("unless-stopped");
    expect(api.labels).toEqual({ tier: "backend" });
    expect(api.command).toEqual(["sleep", "1000"]);
    expect(api.environment).toEqual({ MODE: "prod", TOKEN: "t0k" });
    expect(api.dependsOn.db).toEqual({ condition: "service_healthy", required: true, restart: false });
    expect(p.services[0]!.healthcheck).toEqual({
      test: ["CMD", "test", "-f", "/tmp/ready"],
      intervalMs: 1000,
      timeoutMs: 1000,
      startPeriodMs: 500,
      retries: 3,
    });
    expect(p.services[2]!.ports).toEqual([
      { target: 8080, published: 18080, protocol: "tcp", hostIp: "" },
      { target: 9090, published: 9090, protocol: "udp", hostIp: "127.0.0.1" },
    ]);
    expect(p.volumes.map((v) => v.key)).toEqual(["data"]);
    expect(p.networks.map((n) => n.key)).toEqual(["default"]);
  });

  it("sums reservations (else limits) times replicas into the stack's resources", () => {
    const p = parse(stack);
    // db: 0.5 CPU limit, 128 MiB reservation; api: 2 × (0.25 CPU, 64 MiB); web: nothing.
    expect(stackResources(p)).toEqual({ cpuMillicores: 1000, memoryMib: 256, diskGib: 0 });
    expect(stackHostPorts(p)).toEqual([
      { port: 18080, protocol: "tcp" },
      { port: 9090, protocol: "udp" },
    ]);
  });

  it("reads .env and env_file, the workload env winning over .env", () => {
    const files: Record<string, string> = {
      ".env": "IMAGE=persys-test/busybox:1\nTAG=from-dotenv\n",
      "api.env": "# comment\nexport A=1\nB='two words'\nC=\"line\\nbreak\"\n",
    };
    const p = parse(
      "services:\n  api:\n    image: ${IMAGE}\n    env_file: api.env\n    environment: ['TAG=${TAG}', A=override]\n",
      { env: { TAG: "from-spec" }, readFile: (f) => files[f], projectDir: "/srv/app" },
    );
    expect(p.services[0]!.image).toBe("persys-test/busybox:1");
    expect(p.services[0]!.environment).toEqual({ A: "override", B: "two words", C: "line\nbreak", TAG: "from-spec" });
  });

  it("enables services with profiles only when one of their profiles is active", () => {
    const file = "services:\n  app: { image: a }\n  debug: { image: b, profiles: [debug] }\n";
    expect(parse(file).services.map((s) => s.name)).toEqual(["app"]);
    expect(parse(file).disabledServices).toEqual(["debug"]);
    expect(parse(file, { profiles: ["debug"] }).services.map((s) => s.name)).toEqual(["app", "debug"]);
  });

  it("warns about ignored keys and keeps going", () => {
    const p = parse(
      "version: '3.8'\nservices:\n  a: { image: a, container_name: x, logging: { driver: json-file } }\n",
    );
    expect(p.warnings.map((w) => w.path)).toEqual(["version", "services.a.container_name", "services.a.logging"]);
  });

  it("changes a service's config hash only when its effective config changes", () => {
    const a = parse(stack);
    const b = parse(stack.replace("sleep 1000\n    environment", "sleep 2000\n    environment"));
    const hash = (p: typeof a, name: string) => serviceConfigHash(p.services.find((s) => s.name === name)!, p);
    expect(hash(a, "api")).not.toBe(hash(b, "api"));
    expect(hash(a, "db")).toBe(hash(b, "db"));
    expect(hash(a, "web")).toBe(hash(b, "web"));
    const scaled = parse(stack.replace("replicas: 2", "replicas: 3"));
    expect(hash(scaled, "api")).toBe(hash(a, "api"));
  });

  const bad: [string, string, { path: string; reason: RegExp }][] = [
    [
      "unknown service in depends_on",
      "services:\n  a: { image: a, depends_on: [nope] }\n",
      { path: "services.a.depends_on.nope", reason: /undefined service "nope"/ },
    ],
    [
      "dependency cycle",
      "services:\n  a: { image: a, depends_on: [b] }\n  b: { image: b, depends_on: [c] }\n  c: { image: c, depends_on: [a] }\n",
      { path: "services.c.depends_on.a", reason: /cycle: a -> b -> c -> a/ },
    ],
    [
      "bad port",
      "services:\n  web: { image: a, ports: ['80:99999'] }\n",
      { path: "services.web.ports[0]", reason: /not a port mapping/ },
    ],
    [
      "undefined variable without default",
      "services:\n  web: { image: 'persys-test/web:${TAG}' }\n",
      { path: "services.web.image", reason: /variable TAG is not set and has no default/ },
    ],
    [
      "required variable with a message",
      "services:\n  web: { image: a, environment: { K: '${K:?set K please}' } }\n",
      { path: "services.web.environment.K", reason: /set K please/ },
    ],
    [
      "unsupported key",
      "services:\n  web: { image: a, devices: ['/dev/fuse'] }\n",
      { path: "services.web.devices", reason: /unsupported key "devices"/ },
    ],
    [
      "typo in a key",
      "services:\n  web: { image: a, depend_on: [b] }\n",
      { path: "services.web.depend_on", reason: /unsupported key/ },
    ],
    [
      "missing image",
      "services:\n  web: { command: sleep 1 }\n",
      { path: "services.web.image", reason: /is required/ },
    ],
    [
      "bad depends_on condition",
      "services:\n  a: { image: a }\n  b: { image: b, depends_on: { a: { condition: service_ready } } }\n",
      { path: "services.b.depends_on.a.condition", reason: /must be service_started/ },
    ],
    [
      "undefined named volume",
      "services:\n  a: { image: a, volumes: ['data:/data'] }\n",
      { path: "services.a.volumes[0]", reason: /undefined volume "data"/ },
    ],
    [
      "host port published twice",
      "services:\n  a: { image: a, ports: ['8080:80'] }\n  b: { image: b, ports: ['8080:81'] }\n",
      { path: "services.b.ports[0]", reason: /already published by services.a.ports\[0\]/ },
    ],
    [
      "dependency on a disabled profile",
      "services:\n  a: { image: a, depends_on: [b] }\n  b: { image: b, profiles: [x] }\n",
      { path: "services.a.depends_on.b", reason: /not enabled by the active profiles/ },
    ],
    [
      "bad duration",
      "services:\n  a: { image: a, stop_grace_period: soon }\n",
      { path: "services.a.stop_grace_period", reason: /duration/ },
    ],
    [
      "relative bind in an inline file",
      "services:\n  a: { image: a, volumes: ['./x:/x'] }\n",
      { path: "services.a.volumes[0]", reason: /no directory/ },
    ],
    ["yaml syntax", "services:\n  a: [\n", { path: "(yaml)", reason: /line 3/ }],
  ];

  it.each(bad)("refuses %s with the path", (_name, content, expected) => {
    const found = violations(content);
    expect(found).toContainEqual({ path: expected.path, reason: expect.stringMatching(expected.reason) });
  });

  it("throws INVALID_SPEC naming the file and prefixing the paths", () => {
    let error: unknown;
    try {
      parseCompose(
        { file: "inline", content: "services:\n  a: { image: a, depends_on: [b] }\n" },
        "compose.inlineYaml",
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PersysError);
    const e = error as PersysError;
    expect(e.code).toBe("INVALID_SPEC");
    expect(e.message).toContain("compose file inline");
    expect(e.details).toEqual([
      { path: "compose.inlineYaml.services.a.depends_on.b", reason: 'depends on undefined service "b"' },
    ]);
  });
});

describe("interpolate", () => {
  const env = { A: "a", EMPTY: "" };
  it.each([
    ["$A and ${A}", "a and a"],
    ["${EMPTY:-d}|${EMPTY-d}|${UNSET-d}", "d||d"],
    ["${A:+alt}|${UNSET:+alt}|${EMPTY+set}", "alt||set"],
    ["${UNSET:-${A}}-${UNSET:-${UNSET2:-deep}}", "a-deep"],
    ["cost $$5", "cost $5"],
  ])("%s", (input, output) => expect(interpolate(input, env)).toBe(output));
});

describe("parseDotenv", () => {
  it("reports the line of a malformed entry", () => {
    expect(parseDotenv("A=1\n=2\n")).toEqual({ line: 2, reason: '"" is not a variable name' });
  });
});
