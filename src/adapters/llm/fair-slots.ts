/** Gives a held slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

/**
 * A cap on concurrent LLM requests in one process (`LLM_MAX_CONCURRENT_CALLS`), shared fairly:
 * requests that wait are queued per key (the tenant) and a freed slot goes to the keys in turn,
 * so a tenant with a hundred requests queued gets one slot while another tenant's single request
 * gets the next, not the hundred-and-first. Within a key, first come first served.
 *
 * A slot is held for one HTTP request, not across the retry back-off, so a request waiting out a
 * `Retry-After` does not keep others from the endpoint.
 */
export class FairSlots {
  private used = 0;
  /** Waiting requests per key; the Map's order is the turn order (a served key goes to the back). */
  private readonly queues = new Map<string, (() => void)[]>();
  private queued = 0;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError("size must be a positive integer");
  }

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    return this.queued;
  }

  /**
   * Resolves with the release function once a slot is this key's. With a signal, a request given
   * up while it waits leaves the queue at once (rejecting with the signal's reason), so an
   * abandoned request neither holds a place in the queue nor takes a slot later.
   */
  acquire(key: string, signal?: AbortSignal): Promise<ReleaseSlot> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.used < this.size && this.queued === 0) {
      this.used += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(key);
      const onAbort = () => {
        const waiting = this.queues.get(key);
        const at = waiting?.indexOf(grant) ?? -1;
        if (!waiting || at < 0) return;
        waiting.splice(at, 1);
        if (waiting.length === 0) this.queues.delete(key);
        this.queued -= 1;
        reject(abortReason(signal));
      };
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(this.releaser());
      };
      if (queue) queue.push(grant);
      else this.queues.set(key, [grant]);
      this.queued += 1;
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= 1;
      this.grantNext();
    };
  }

  /** The slot just freed goes to the first key in turn, which then moves to the back. */
  private grantNext(): void {
    if (this.used >= this.size) return;
    const first = this.queues.entries().next();
    if (first.done) return;
    const [key, queue] = first.value;
    const grant = queue.shift();
    this.queues.delete(key);
    if (queue.length > 0) this.queues.set(key, queue);
    if (!grant) return;
    this.queued -= 1;
    this.used += 1;
    grant();
  }
}

/** An `AbortError`, as fetch and the OpenAI SDK throw, which the LLM error classifier reads as given up. */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : Object.assign(new Error("aborted"), { name: "AbortError" });
}
