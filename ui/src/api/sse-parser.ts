/** One server-sent event: `data` lines joined by "\n"; `event` is "message" when the server named none. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
  /** The `id:` field of this event, or undefined when it had none. */
  readonly id?: string;
}

/**
 * An incremental parser of the `text/event-stream` format (the WHATWG rules): feed it text chunks as
 * they arrive, split anywhere (even inside a line or a CRLF), and it returns the complete events.
 * Comments (`: heartbeat`) are dropped; `retry:` is ignored; an event without `data` is not dispatched.
 *
 * `lastEventId` keeps the last id seen, to send as `Last-Event-ID` when reconnecting.
 */
export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private eventName = "";
  private eventId: string | undefined;
  private sawCr = false;
  lastEventId: string | undefined;

  /** Parses a chunk; returns the events it completed, in order. */
  push(chunk: string): SseEvent[] {
    let text = chunk;
    // A CR at the end of the previous chunk already ended a line; a LF right after it is part of it.
    if (this.sawCr && text.startsWith("\n")) text = text.slice(1);
    this.sawCr = text.endsWith("\r");
    this.buffer += text;
    const out: SseEvent[] = [];
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() ?? "";
    for (const line of lines) {
      const event = this.line(line);
      if (event) out.push(event);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.eventName = value;
    else if (field === "id" && !value.includes("\0")) this.eventId = value;
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const id = this.eventId;
    if (id !== undefined) this.lastEventId = id;
    const event =
      this.data.length > 0
        ? { event: this.eventName || "message", data: this.data.join("\n"), ...(id !== undefined ? { id } : {}) }
        : undefined;
    this.data = [];
    this.eventName = "";
    this.eventId = undefined;
    return event;
  }
}
