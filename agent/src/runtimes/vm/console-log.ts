import { open } from "node:fs/promises";

export interface ConsoleReadOptions {
  /** Only the last N lines of what is there now. */
  readonly tail?: number;
  /** Keep reading what the guest writes until `signal` aborts. */
  readonly follow: boolean;
  readonly signal: AbortSignal;
  /** How often a followed file is checked for growth. */
  readonly pollMs?: number;
}

/**
 * A VM's serial console log as lines (CR removed, ANSI kept): what is there (or its tail), then,
 * with `follow`, every line the guest writes after, until the signal aborts. The file may not exist
 * yet (the domain was defined but never started): it is read once it appears.
 */
export async function* consoleLines(path: string, o: ConsoleReadOptions): AsyncGenerator<string[]> {
  let offset = 0;
  let partial = "";
  let first = true;
  const pollMs = o.pollMs ?? 250;
  while (!o.signal.aborted) {
    const chunk = await readFrom(path, offset);
    if (chunk.length > 0) {
      offset += chunk.length;
      const text = partial + chunk.toString("utf8").replace(/\r/g, "");
      const lines = text.split("\n");
      partial = lines.pop() ?? "";
      const out = first && o.tail !== undefined ? lines.slice(Math.max(0, lines.length - o.tail)) : lines;
      if (out.length > 0) yield out;
    }
    first = false;
    if (!o.follow) break;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  if (!o.follow && partial) yield [partial];
}

async function readFrom(path: string, offset: number): Promise<Buffer> {
  let f: Awaited<ReturnType<typeof open>>;
  try {
    f = await open(path, "r");
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const { size } = await f.stat();
    if (size <= offset) return Buffer.alloc(0);
    const buf = Buffer.alloc(size - offset);
    await f.read(buf, 0, buf.length, offset);
    return buf;
  } finally {
    await f.close();
  }
}
