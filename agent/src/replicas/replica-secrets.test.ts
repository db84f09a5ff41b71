import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agent, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { SecretFiles, secretValuesOf } from "./replica-secrets.js";

const refs = {
  env: [{ name: "TOKEN", secret: "api", key: "token" }],
  files: [{ secret: "api", key: "crt", path: "/etc/app/crt", mode: 0o400 }],
};

const request = (values: { secret: string; key: string; value: string }[]) =>
  agent.ApplyWorkloadRequest.fromPartial({
    id: "app-0",
    persysSecrets: { values: values.map((v) => ({ ...v, value: Buffer.from(v.value), version: 1 })) },
  });

describe("replica secrets on the agent", () => {
  it("takes the values a request carries for the replica's references", () => {
    const values = secretValuesOf(
      request([
        { secret: "api", key: "token", value: "t0k3n" },
        { secret: "api", key: "crt", value: "CERT" },
      ]),
      refs,
    );
    expect(values?.get("api/token")?.toString()).toBe("t0k3n");
    expect(secretValuesOf(request([]), { env: [], files: [] })).toBeUndefined();
  });

  it("refuses a request without a value for a reference with SECRET_NOT_FOUND, never echoing values", () => {
    let error: unknown;
    try {
      secretValuesOf(request([{ secret: "api", key: "token", value: "t0k3n" }]), refs);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("SECRET_NOT_FOUND");
    expect((error as PersysError).message).toContain("api key crt");
    expect((error as PersysError).message).not.toContain("t0k3n");
  });

  it("writes files in a 0700 directory with their mode, env as text, and removes them", async () => {
    const files = new SecretFiles(join(mkdtempSync(join(tmpdir(), "persys-secrets-")), "root"));
    const values = new Map([
      ["api/token", Buffer.from("t0k3n")],
      ["api/crt", Buffer.from("CERT")],
    ]);
    const out = await files.materialise("app-0", refs, values);
    expect(out?.env).toEqual({ TOKEN: "t0k3n" });
    const file = out!.files[0]!;
    expect(file.target).toBe("/etc/app/crt");
    expect(readFileSync(file.source, "utf8")).toBe("CERT");
    expect(statSync(file.source).mode & 0o777).toBe(0o400);
    expect(statSync(files.dirOf("app-0")).mode & 0o777).toBe(0o700);
    await files.remove("app-0");
    expect(() => statSync(files.dirOf("app-0"))).toThrow();
  });

  it("fails with SECRET_NOT_FOUND when the values were lost (agent restart)", async () => {
    const files = new SecretFiles(mkdtempSync(join(tmpdir(), "persys-secrets-")));
    await expect(files.materialise("app-0", refs, undefined)).rejects.toMatchObject({ code: "SECRET_NOT_FOUND" });
  });
});
