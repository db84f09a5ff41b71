import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStateStore } from "../open-state-store.js";
import type { StateStore, TxnRequest } from "../state-store.js";

/** A real embedded store in a scratch folder that notes each transaction it is sent (for batcher tests). */
export interface RecordingStore {
  readonly store: StateStore;
  /** The transactions sent so far, in order; tests may empty it. */
  txns: TxnRequest[];
  /** Closes the store and removes its folder. */
  close(): Promise<void>;
}

export async function openRecordingStore(prefix: string): Promise<RecordingStore> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const real = await openStateStore({ kind: "embedded", dataDir: dir });
  const recording: RecordingStore = {
    txns: [],
    store: Object.assign(Object.create(real) as StateStore, {
      txn: (request: TxnRequest) => {
        recording.txns.push(request);
        return real.txn(request);
      },
    }),
    close: async () => {
      await real.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return recording;
}
