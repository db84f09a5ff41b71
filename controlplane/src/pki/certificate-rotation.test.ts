import { X509Certificate as NodeX509Certificate } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { connect, createServer, type TLSSocket } from "node:tls";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type CertificateFiles,
  type CertificateMaterial,
  CertificateRotator,
  type RotationClock,
  renewalTime,
} from "./certificate-rotation.js";
import { ClusterCa } from "./cluster-ca.js";
import { temporaryDirs } from "./testing/tls-test-support.js";

const DAY = 24 * 60 * 60 * 1000;
const dirs = temporaryDirs("persys-rotation-");
const rotators: CertificateRotator[] = [];
afterEach(() => {
  for (const r of rotators.splice(0)) r.stop();
  dirs.cleanup();
});

/** A clock whose timers run only when the test advances it. */
class ManualClock implements RotationClock {
  time = Date.parse("2030-01-01T00:00:00Z");
  readonly delays: number[] = [];
  private timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;

  now(): number {
    return this.time;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    this.delays.push(ms);
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  get pending(): number {
    return this.timers.size;
  }
  /** Moves to `at`, firing every timer due on the way (in order). */
  advanceTo(at: number): void {
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= at).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
    }
    this.time = at;
  }
}

async function setup(options: { validityMs?: number; fail?: () => boolean } = {}) {
  const clock = new ManualClock();
  const { ca } = await ClusterCa.generate({ now: () => clock.now() });
  const issued: CertificateMaterial[] = [];
  const issue = vi.fn(async () => {
    if (options.fail?.()) throw new Error("issuer down");
    const cert = await ca.issueServer(["localhost"], { validityMs: options.validityMs ?? 30 * DAY });
    issued.push(cert);
    return cert;
  });
  const dir = dirs.make();
  const files: CertificateFiles = {
    certPath: join(dir, "server.crt"),
    keyPath: join(dir, "server.key"),
    caPath: join(dir, "ca.crt"),
  };
  return { clock, ca, issue, issued, files };
}

async function start(
  parts: Awaited<ReturnType<typeof setup>>,
  extra: Partial<Parameters<typeof CertificateRotator.start>[0]> = {},
) {
  const rotator = await CertificateRotator.start({
    issue: parts.issue,
    files: parts.files,
    clock: parts.clock,
    ...extra,
  });
  rotators.push(rotator);
  return rotator;
}

const serial = (pem: string) => new NodeX509Certificate(pem).serialNumber;

describe("CertificateRotator", () => {
  it("issues at start and writes the files (key 0600) atomically", async () => {
    const parts = await setup();
    const rotator = await start(parts);
    expect(parts.issue).toHaveBeenCalledTimes(1);
    expect(rotator.current.certPem).toBe(parts.issued[0]!.certPem);
    expect(readFileSync(parts.files.certPath, "utf8")).toBe(rotator.current.certPem);
    expect(readFileSync(parts.files.keyPath, "utf8")).toBe(rotator.current.keyPem);
    expect(readFileSync(parts.files.caPath, "utf8")).toBe(parts.ca.certPem);
    expect(statSync(parts.files.keyPath).mode & 0o777).toBe(0o600);
    expect(statSync(parts.files.certPath).mode & 0o777).toBe(0o644);
  });

  it("starts from valid files without issuing", async () => {
    const parts = await setup();
    const first = await start(parts);
    first.stop();
    const again = await start(parts);
    expect(parts.issue).toHaveBeenCalledTimes(1);
    expect(again.current.certPem).toBe(first.current.certPem);
  });

  it.each<[string, (parts: Awaited<ReturnType<typeof setup>>) => Promise<void> | void]>([
    ["a key file with loose permissions", (p) => chmodSync(p.files.keyPath, 0o644)],
    [
      "a key of another certificate",
      async (p) => writeFileSync(p.files.keyPath, (await p.ca.issueUser("x", "viewer")).keyPem),
    ],
    ["a CA file of another CA", async (p) => writeFileSync(p.files.caPath, (await ClusterCa.generate()).ca.certPem)],
    ["a garbled certificate", (p) => writeFileSync(p.files.certPath, "garbage")],
  ])("re-issues at start instead of using %s", async (_name, damage) => {
    const parts = await setup();
    (await start(parts)).stop();
    await damage(parts);
    const again = await start(parts);
    expect(parts.issue).toHaveBeenCalledTimes(2);
    expect(again.current.certPem).toBe(parts.issued[1]!.certPem);
    expect(statSync(parts.files.keyPath).mode & 0o777).toBe(0o600);
  });

  it("re-issues at start when the files hold a consistent pair of an older CA than the one given", async () => {
    const parts = await setup();
    (await start(parts)).stop();
    const { ca: newer } = await ClusterCa.generate({ now: () => parts.clock.now() });
    const issue = vi.fn(() => newer.issueServer(["localhost"]));
    const again = await start(parts, { issue, caPem: newer.certPem });
    expect(issue).toHaveBeenCalledTimes(1);
    expect(again.current.caPem).toBe(newer.certPem);
    // With the CA it was issued by, the same files are started from.
    again.stop();
    const same = await start(parts, { issue, caPem: newer.certPem });
    expect(issue).toHaveBeenCalledTimes(1);
    expect(same.current.certPem).toBe(again.current.certPem);
  });

  it("re-issues at start when the certificate in the files is already due", async () => {
    const parts = await setup();
    const first = await start(parts);
    first.stop();
    parts.clock.time = first.renewsAt.getTime();
    await start(parts);
    expect(parts.issue).toHaveBeenCalledTimes(2);
  });

  it("rotates when a third of the lifetime remains, not a millisecond earlier", async () => {
    const parts = await setup();
    const rotator = await start(parts);
    const { notBefore, notAfter } = rotator.current;
    const due = notAfter.getTime() - (notAfter.getTime() - notBefore.getTime()) / 3;
    expect(rotator.renewsAt.getTime()).toBe(due);
    const rotated: CertificateMaterial[] = [];
    rotator.onRotate((m) => {
      rotated.push(m);
    });

    parts.clock.advanceTo(due - 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(parts.issue).toHaveBeenCalledTimes(1);

    parts.clock.advanceTo(due);
    await vi.waitFor(() => expect(rotated).toHaveLength(1));
    expect(parts.issue).toHaveBeenCalledTimes(2);
    expect(rotated[0]).toEqual({
      certPem: parts.issued[1]!.certPem,
      keyPem: parts.issued[1]!.keyPem,
      caPem: parts.ca.certPem,
    });
    expect(rotator.current.certPem).toBe(parts.issued[1]!.certPem);
    expect(readFileSync(parts.files.certPath, "utf8")).toBe(parts.issued[1]!.certPem);
    expect(readFileSync(parts.files.keyPath, "utf8")).toBe(parts.issued[1]!.keyPem);
    // The next rotation is scheduled from the new certificate.
    expect(rotator.renewsAt.getTime()).toBe(renewalTime(rotator.current, 1 / 3));
    expect(rotator.renewsAt.getTime()).toBeGreaterThan(due);
    expect(parts.clock.pending).toBe(1);
  });

  it("honours another renewBefore fraction", async () => {
    const parts = await setup();
    const rotator = await start(parts, { renewBefore: 0.5 });
    const { notBefore, notAfter } = rotator.current;
    expect(rotator.renewsAt.getTime()).toBe((notBefore.getTime() + notAfter.getTime()) / 2);
  });

  it("waits in steps no longer than setTimeout allows for long lifetimes", async () => {
    const parts = await setup({ validityMs: 365 * DAY });
    const rotator = await start(parts);
    const due = rotator.renewsAt.getTime();
    expect(due - parts.clock.now()).toBeGreaterThan(2 ** 31);
    parts.clock.advanceTo(due - 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(parts.issue).toHaveBeenCalledTimes(1);
    expect(Math.max(...parts.clock.delays)).toBeLessThanOrEqual(2 ** 31 - 1);
    parts.clock.advanceTo(due);
    await vi.waitFor(() => expect(parts.issue).toHaveBeenCalledTimes(2));
  });

  it("keeps the current certificate and retries with backoff when issuing fails", async () => {
    let failing = false;
    const parts = await setup({ fail: () => failing });
    const errors: unknown[] = [];
    const rotator = await start(parts, { onError: (e) => errors.push(e), retryDelayMs: 1000 });
    const original = rotator.current.certPem;
    failing = true;
    parts.clock.advanceTo(rotator.renewsAt.getTime());
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(rotator.current.certPem).toBe(original);
    expect(parts.clock.delays.at(-1)).toBe(1000);
    parts.clock.advanceTo(parts.clock.now() + 1000);
    await vi.waitFor(() => expect(errors).toHaveLength(2));
    expect(parts.clock.delays.at(-1)).toBe(2000);
    failing = false;
    parts.clock.advanceTo(parts.clock.now() + 2000);
    await vi.waitFor(() => expect(rotator.current.certPem).not.toBe(original));
    expect(parts.clock.delays.at(-1)).toBeGreaterThan(DAY);
  });

  it("fails to start when the first certificate cannot be issued", async () => {
    const parts = await setup({ fail: () => true });
    await expect(start(parts)).rejects.toThrow("issuer down");
  });

  it("reports a throwing listener and still tells the others", async () => {
    const parts = await setup();
    const errors: unknown[] = [];
    const rotator = await start(parts, { onError: (e) => errors.push(e) });
    const seen: string[] = [];
    rotator.onRotate(() => {
      throw new Error("listener broke");
    });
    const unsubscribe = rotator.onRotate((m) => {
      seen.push(m.certPem);
    });
    await rotator.rotateNow();
    expect(seen).toEqual([rotator.current.certPem]);
    expect(errors).toEqual([new Error("listener broke")]);
    unsubscribe();
    await rotator.rotateNow();
    expect(seen).toHaveLength(1);
  });

  it("shares one re-issue between concurrent rotateNow calls", async () => {
    const parts = await setup();
    const rotator = await start(parts);
    const [a, b] = await Promise.all([rotator.rotateNow(), rotator.rotateNow()]);
    expect(a).toBe(b);
    expect(parts.issue).toHaveBeenCalledTimes(2);
  });

  it("stops: no timer fires after stop()", async () => {
    const parts = await setup();
    const rotator = await start(parts);
    rotator.stop();
    expect(parts.clock.pending).toBe(0);
    parts.clock.advanceTo(rotator.current.notAfter.getTime());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(parts.issue).toHaveBeenCalledTimes(1);
  });

  it("hot-reloads a TLS server: open connections stay, new ones get the new certificate", async () => {
    const { ca } = await ClusterCa.generate();
    const rotator = await CertificateRotator.start({ issue: () => ca.issueServer(["localhost", "127.0.0.1"]) });
    rotators.push(rotator);
    const server = createServer({ cert: rotator.current.certPem, key: rotator.current.keyPem }, (socket) => {
      socket.on("data", (data) => socket.write(data));
    });
    rotator.onRotate(({ certPem, keyPem }) => server.setSecureContext({ cert: certPem, key: keyPem }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const open = () =>
      new Promise<TLSSocket>((resolve, reject) => {
        const socket = connect({ host: "127.0.0.1", port, servername: "localhost", ca: ca.certPem }, () =>
          resolve(socket),
        );
        socket.once("error", reject);
      });
    const echo = (socket: TLSSocket, text: string) =>
      new Promise<string>((resolve) => {
        socket.once("data", (data) => resolve(data.toString()));
        socket.write(text);
      });
    try {
      const before = await open();
      const firstSerial = before.getPeerCertificate().serialNumber;
      expect(firstSerial).toBe(serial(rotator.current.certPem));
      await rotator.rotateNow();
      const after = await open();
      expect(after.getPeerCertificate().serialNumber).toBe(serial(rotator.current.certPem));
      expect(after.getPeerCertificate().serialNumber).not.toBe(firstSerial);
      expect(await echo(before, "still here")).toBe("still here");
      before.destroy();
      after.destroy();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
