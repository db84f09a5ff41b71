/**
 * Child process of embedded-crash.test.ts: writes to an embedded store as fast as it can and prints one
 * line per acknowledged write, `ack <i> <revision> <key>=<value>[,<key>=<value>]`, only after the write's
 * promise resolved. The parent kills it with SIGKILL at an arbitrary moment.
 *
 *   node --conditions=development --import tsx embedded-crash-writer.ts <dataDir> <firstIndex>
 */
import { EmbeddedStateStore, encodeText } from "@persys/controlplane";

const [dataDir, first] = process.argv.slice(2);
if (!dataDir || first === undefined) throw new Error("usage: embedded-crash-writer <dataDir> <firstIndex>");
const store = await EmbeddedStateStore.open({ dataDir });
process.stdout.write("ready\n");
for (let i = Number(first); ; i++) {
  const key = `crash/k${String(i).padStart(7, "0")}`;
  const value = `value-${i}-${"x".repeat(i % 97)}`;
  if (i % 5 === 0) {
    // Every fifth write is a two-key transaction: both keys or neither.
    const { revision } = await store.txn({
      success: [
        { type: "put", key, value: encodeText(value) },
        { type: "put", key: `${key}/meta`, value: encodeText(`meta-${i}`) },
      ],
    });
    process.stdout.write(`ack ${i} ${revision} ${key}=${value},${key}/meta=meta-${i}\n`);
  } else {
    const { revision } = await store.put(key, encodeText(value));
    process.stdout.write(`ack ${i} ${revision} ${key}=${value}\n`);
  }
}
