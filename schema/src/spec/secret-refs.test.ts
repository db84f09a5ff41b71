import { describe, expect, it } from "vitest";
import { Workload } from "../gen/persys/api/v1/workload.js";
import { secretKeyProblem, secretNamesOf, secretUsesOf } from "./secret-refs.js";
import { workloadViolations } from "./validate-workload.js";

const withSecrets = (container: Record<string, unknown>) =>
  Workload.fromJSON({
    id: "app",
    kind: "WORKLOAD_KIND_CONTAINER",
    container: { image: "busybox:1", ...container },
  });

describe("secret references in a container spec", () => {
  it("accepts env and file references and lists their uses in a stable order", () => {
    const w = withSecrets({
      secretEnv: { TOKEN: { secret: "api", key: "token" }, DB_PASSWORD: { secret: "db" } },
      secretFiles: [{ ref: { secret: "api", key: "tls.crt" }, path: "/etc/app/tls.crt", mode: 0o400 }],
    });
    expect(workloadViolations(w)).toEqual([]);
    if (w.spec?.$case !== "container") throw new Error("container expected");
    expect(secretUsesOf(w.spec.value)).toEqual([
      { secret: "db", key: "DB_PASSWORD", as: { env: "DB_PASSWORD" } },
      { secret: "api", key: "token", as: { env: "TOKEN" } },
      { secret: "api", key: "tls.crt", as: { path: "/etc/app/tls.crt", mode: 0o400 } },
    ]);
    expect(secretNamesOf(w)).toEqual(["api", "db"]);
  });

  it.each<{ name: string; container: Record<string, unknown>; path: string; reason: RegExp }>([
    {
      name: "no secret name",
      container: { secretEnv: { A: { key: "k" } } },
      path: "secretEnv.A.secret",
      reason: /required/,
    },
    {
      name: "an upper-case secret name",
      container: { secretEnv: { A: { secret: "Api" } } },
      path: "secretEnv.A.secret",
      reason: /DNS-1123/,
    },
    {
      name: "a bad key",
      container: { secretEnv: { A: { secret: "api", key: "a/b" } } },
      path: "secretEnv.A.key",
      reason: /letters, digits/,
    },
    {
      name: "a name in both env and secretEnv",
      container: { env: { A: "x" }, secretEnv: { A: { secret: "api" } } },
      path: "secretEnv.A",
      reason: /also set in env/,
    },
    {
      name: "a file without a key",
      container: { secretFiles: [{ ref: { secret: "api" }, path: "/run/token" }] },
      path: "secretFiles[0].ref.key",
      reason: /required/,
    },
    {
      name: "a relative file path",
      container: { secretFiles: [{ ref: { secret: "api", key: "k" }, path: "run/token" }] },
      path: "secretFiles[0].path",
      reason: /absolute/,
    },
    {
      name: "two files at one path",
      container: {
        secretFiles: [
          { ref: { secret: "api", key: "a" }, path: "/run/x" },
          { ref: { secret: "api", key: "b" }, path: "/run/x" },
        ],
      },
      path: "secretFiles[1].path",
      reason: /secretFiles\[0\]/,
    },
    {
      name: "a mode beyond 0777",
      container: { secretFiles: [{ ref: { secret: "api", key: "k" }, path: "/run/k", mode: 0o1777 }] },
      path: "secretFiles[0].mode",
      reason: /0\.\.0777/,
    },
  ])("refuses $name, naming the field", ({ container, path, reason }) => {
    const violations = workloadViolations(withSecrets(container));
    expect(violations).toContainEqual({ path: `container.${path}`, reason: expect.stringMatching(reason) });
  });

  it.each([
    ["token", undefined],
    ["tls.crt", undefined],
    ["", "is required"],
    ["..", "secret key must be letters, digits, '-', '_' and '.' (not '.' or '..')"],
    ["a b", "secret key must be letters, digits, '-', '_' and '.' (not '.' or '..')"],
  ])("secretKeyProblem(%j)", (key, problem) => {
    expect(secretKeyProblem(key)).toBe(problem);
  });
});
