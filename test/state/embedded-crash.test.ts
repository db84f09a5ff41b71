/**
 * Durability of the embedded state store: a writer process is killed with SIGKILL in the middle of its
 * writes; after reopening, every write it acknowledged is there with its value and revision, and the
 * revision counter continues from where it was.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeText, EmbeddedStateStore, encodeText } from "@persys/controlplane";
import { describe, expect, it } from "vitest";
import { runDir } from "../support/services.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");

interface Ack {
  index: number;
  revision: number;
  writes: [key: string, value: string][];
}

/** Runs the writer until `acks` writes are acknowledged (plus a random few), then SIGKILLs it. */
async function writeUntilKilled(dataDir: string, first: number, acks: number): Promise<Ack[]> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=development", "--import", "tsx", join(here, "embedded-crash-writer.ts"), dataDir, String(first)],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  const acked: Ack[] = [];
  let stderr = "";
  let buffered = "";
  const killAfter = acks + Math.floor(Math.random() * 50);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? ""; // a line cut by the kill is not an acknowledgement
    for (const line of lines) {
      const match = /^ack (\d+) (\d+) (.*)$/.exec(line);
      if (!match) continue;
      const writes = match[3]!.split(",").map((w) => w.split("=", 2) as [string, string]);
      acked.push({ index: Number(match[1]), revision: Number(match[2]), writes });
      if (acked.length === killAfter) child.kill("SIGKILL");
    }
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const { signal } = await exited;
  clearTimeout(timer);
  expect(signal, `writer should be killed after ${killAfter} acks, not exit by itself; stderr: ${stderr}`).toBe(
    "SIGKILL",
  );
  expect(acked.length, `acknowledged writes before the kill; stderr: ${stderr}`).toBeGreaterThanOrEqual(killAfter);
  return acked;
}

describe("embedded state store durability under SIGKILL", () => {
  it("keeps every acknowledged write across three kills, and the revision keeps growing", async () => {
    const dataDir = mkdtempSync(join(runDir(), "state-crash-"));
    const all: Ack[] = [];
    let next = 0;
    for (let round = 0; round < 3; round++) {
      const acked = await writeUntilKilled(dataDir, next, 150);
      if (all.length > 0) expect(acked[0]!.revision).toBeGreaterThan(all.at(-1)!.revision);
      all.push(...acked);
      next = acked.at(-1)!.index + 1;

      const store = await EmbeddedStateStore.open({ dataDir });
      try {
        const missing: string[] = [];
        for (const ack of all) {
          for (const [key, value] of ack.writes) {
            const kv = await store.get(key);
            if (!kv || decodeText(kv.value) !== value || kv.modRevision !== ack.revision) {
              missing.push(`${key}@${ack.revision}: ${kv ? `${decodeText(kv.value)}@${kv.modRevision}` : "absent"}`);
            }
          }
        }
        expect(missing, `round ${round}: acknowledged writes lost or changed`).toEqual([]);
        // At most the one write in flight at the kill is there beyond the acknowledged ones.
        const current = await store.currentRevision();
        expect(current).toBeGreaterThanOrEqual(all.at(-1)!.revision);
        expect(current).toBeLessThanOrEqual(all.at(-1)!.revision + 1);
        // No half transaction: every key has its meta key when it was written by a transaction.
        const keys = (await store.range("crash/", { keysOnly: true })).kvs.map((kv) => kv.key);
        const txnKeys = keys.filter((k) => !k.endsWith("/meta") && Number(k.slice(7)) % 5 === 0);
        expect(txnKeys.filter((k) => !keys.includes(`${k}/meta`))).toEqual([]);
      } finally {
        await store.close();
      }
    }
    const store = await EmbeddedStateStore.open({ dataDir });
    try {
      const before = await store.currentRevision();
      const { revision } = await store.put("crash/after", encodeText("after"));
      expect(revision).toBe(before + 1);
      expect(revision).toBeGreaterThan(all.at(-1)!.revision);
    } finally {
      await store.close();
    }
  });
});
