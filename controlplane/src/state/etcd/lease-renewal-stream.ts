import { PersysError } from "@persys/schema";

/** The slice of etcd3's LeaseKeepAlive duplex stream this uses. */
export interface KeepAliveStream {
  write(request: { ID: string }): unknown;
  on(event: "data", listener: (response: { ID: string; TTL: string }) => void): unknown;
  on(event: "error", listener: (error: unknown) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  cancel(): void;
}

interface Waiter {
  resolve(ttl: string): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

/**
 * Every lease renewal of one store over ONE long-lived LeaseKeepAlive stream, as etcd's Go client
 * does. etcd answers each request on the stream with the lease's ID and new TTL, so answers are
 * matched to waiting callers by ID (first come, first answered). Opening and cancelling a stream per
 * renewal (a thousand nodes' heartbeats: hundreds a second) cost a stream setup each, and etcd3
 * treats a cancelled stream as a failed host and rebuilds its channels. When the stream fails, every
 * waiting renewal fails with that error and the next renewal opens a new stream.
 */
export class LeaseRenewalStream {
  private stream: Promise<KeepAliveStream> | undefined;
  private readonly waiting = new Map<string, Waiter[]>();
  private closed = false;

  constructor(
    private readonly open: () => Promise<KeepAliveStream>,
    private readonly timeoutMs: number,
  ) {}

  /** The lease's TTL in seconds as etcd answered it ("0" or less: the lease is gone). */
  async renew(lease: string): Promise<string> {
    if (this.closed) throw new PersysError("UNAVAILABLE", "the state store is closed");
    const stream = await this.current();
    return new Promise<string>((resolve, reject) => {
      const queue = this.waiting.get(lease) ?? [];
      this.waiting.set(lease, queue);
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          if (queue.length === 0 && this.waiting.get(lease) === queue) this.waiting.delete(lease);
          reject(new PersysError("DEADLINE_EXCEEDED", "etcd keepAliveOnce timed out"));
        }, this.timeoutMs),
      };
      queue.push(waiter);
      stream.write({ ID: lease });
    });
  }

  close(): void {
    this.closed = true;
    void this.stream?.then(
      (s) => s.cancel(),
      () => undefined,
    );
    this.fail(new PersysError("UNAVAILABLE", "the state store is closed"));
  }

  private current(): Promise<KeepAliveStream> {
    if (this.stream) return this.stream;
    const opened = this.open().then((stream) => {
      const lost = (error: unknown) => {
        if (this.stream !== opened) return;
        this.stream = undefined;
        this.fail(error);
      };
      stream.on("data", (response) => this.answer(response));
      stream.on("error", lost);
      stream.on("end", () => lost(new PersysError("UNAVAILABLE", "etcd ended the lease keep-alive stream")));
      return stream;
    });
    opened.catch(() => {
      if (this.stream === opened) this.stream = undefined;
    });
    this.stream = opened;
    return opened;
  }

  private answer(response: { ID: string; TTL: string }): void {
    const queue = this.waiting.get(response.ID);
    const waiter = queue?.shift();
    if (!waiter) return;
    if (queue!.length === 0) this.waiting.delete(response.ID);
    clearTimeout(waiter.timer);
    waiter.resolve(response.TTL);
  }

  private fail(error: unknown): void {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    for (const waiter of all) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
  }
}
