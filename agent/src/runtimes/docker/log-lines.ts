/** One line of container output. */
export interface LogLine {
  readonly stream: "stdout" | "stderr";
  /** When Docker recorded it (from the `timestamps` prefix). */
  readonly time?: Date;
  /** Without its trailing newline; invalid UTF-8 replaced. */
  readonly line: string;
}

const HEADER = 8;

/** Splits `2024-05-01T10:00:00.123456789Z text` into its time and text. */
export function splitTimestamp(text: string): { time?: Date; line: string } {
  const space = text.indexOf(" ");
  const head = space > 0 ? text.slice(0, space) : text;
  if (/^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)$/.test(head)) {
    const t = Date.parse(head);
    if (!Number.isNaN(t)) return { time: new Date(t), line: space > 0 ? text.slice(space + 1) : "" };
  }
  return { line: text };
}

/**
 * Turns Docker's log stream (8-byte frame headers: stream type and length, then the payload) into
 * lines per stream. Bytes are kept until a newline arrives, so a line (or a UTF-8 character) split
 * across frames or chunks comes out whole. A stream without frame headers (a TTY container) is read
 * as plain stdout. `end()` flushes unterminated lines.
 */
export class LogDemuxer {
  private pending: Buffer = Buffer.alloc(0);
  private raw = false;
  private readonly partial: Record<"stdout" | "stderr", Buffer[]> = { stdout: [], stderr: [] };

  push(chunk: Buffer): LogLine[] {
    const out: LogLine[] = [];
    if (this.raw) {
      this.feed("stdout", chunk, out);
      return out;
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= HEADER) {
      const type = this.pending[0]!;
      if (type !== 0 && type !== 1 && type !== 2) {
        this.raw = true;
        const rest = this.pending;
        this.pending = Buffer.alloc(0);
        this.feed("stdout", rest, out);
        return out;
      }
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < HEADER + size) break;
      const payload = this.pending.subarray(HEADER, HEADER + size);
      this.pending = this.pending.subarray(HEADER + size);
      this.feed(type === 2 ? "stderr" : "stdout", payload, out);
    }
    return out;
  }

  end(): LogLine[] {
    const out: LogLine[] = [];
    for (const stream of ["stdout", "stderr"] as const) {
      const rest = Buffer.concat(this.partial[stream]);
      this.partial[stream] = [];
      if (rest.length > 0) out.push({ stream, ...splitTimestamp(rest.toString("utf8")) });
    }
    return out;
  }

  private feed(stream: "stdout" | "stderr", data: Buffer, out: LogLine[]): void {
    let start = 0;
    for (let at = data.indexOf(10, start); at >= 0; at = data.indexOf(10, start)) {
      const pieces = this.partial[stream];
      pieces.push(data.subarray(start, at));
      const text = Buffer.concat(pieces).toString("utf8").replace(/\r$/, "");
      this.partial[stream] = [];
      out.push({ stream, ...splitTimestamp(text) });
      start = at + 1;
    }
    if (start < data.length) this.partial[stream].push(Buffer.from(data.subarray(start)));
  }
}
