import { X509Certificate } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { caPublicKeyPin, readClientConfig } from "@persys/schema";
import { afterAll, describe, expect, it } from "vitest";
import { temporaryDirs } from "../pki/testing/tls-test-support.js";
import { describeCa, issueUserFromDataDir } from "./pki-commands.js";

const dirs = temporaryDirs("persys-pki-cli-");
afterAll(() => dirs.cleanup());

describe("persys pki", () => {
  it("ca creates the CA once and reports its fingerprint and pin", async () => {
    const dataDir = dirs.make();
    const first = await describeCa(dataDir);
    expect(first.created).toBe(true);
    expect(first.certPath).toBe(join(dataDir, "pki", "ca.crt"));
    const pem = readFileSync(first.certPath, "utf8");
    expect(first.fingerprint).toBe(new X509Certificate(pem).fingerprint256);
    expect(first.pin).toBe(caPublicKeyPin(pem));
    const again = await describeCa(dataDir);
    expect(again).toMatchObject({ created: false, pin: first.pin });
  });

  it("user writes the certificate, a 0600 key and the CA, and saves a context using them", async () => {
    const dataDir = dirs.make();
    const out = dirs.make();
    const configPath = join(dirs.make(), "config.yaml");
    const result = await issueUserFromDataDir({
      dataDir,
      name: "alice",
      role: "operator",
      out,
      context: "local",
      endpoint: "https://127.0.0.1:7070",
      configPath,
    });
    expect(result).toMatchObject({
      certPath: join(out, "alice.crt"),
      keyPath: join(out, "alice.key"),
      caPath: join(out, "ca.crt"),
      contextSaved: "local",
    });
    expect(statSync(result.keyPath).mode & 0o777).toBe(0o600);
    const cert = new X509Certificate(readFileSync(result.certPath));
    expect(cert.subject).toBe("CN=alice\nO=operator");
    expect(cert.checkIssued(new X509Certificate(readFileSync(result.caPath)))).toBe(true);
    expect(readClientConfig(configPath)).toEqual({
      currentContext: "local",
      contexts: [
        {
          name: "local",
          endpoint: "https://127.0.0.1:7070",
          token: undefined,
          caCert: result.caPath,
          clientCert: result.certPath,
          clientKey: result.keyPath,
        },
      ],
    });
  });

  it("user refuses a bad name before writing anything", async () => {
    const out = join(dirs.make(), "certs");
    await expect(
      issueUserFromDataDir({ dataDir: dirs.make(), name: "no spaces", role: "viewer", out }),
    ).rejects.toThrow(/user certificate request/);
    expect(() => statSync(out)).toThrow();
  });
});
