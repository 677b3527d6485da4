/** Thrown into work that shutdown or a rebalance gave up on: nothing of it is committed. */
export class Abandoned extends Error {
  override readonly name = "Abandoned";
}

/** Sleeps `ms`, or rejects with `Abandoned` as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Abandoned("abandoned"));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Abandoned("abandoned"));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Sleeps `ms`, or less: resolves as soon as the signal aborts (a back-off that shutdown cuts short). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Resolves on `notify()` or after `ms`, whichever comes first; a notify with no waiter is kept. */
export class Wakeup {
  private waiter: (() => void) | null = null;
  private pending = false;
  readonly notify = (): void => {
    this.pending = true;
    this.waiter?.();
  };
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiter = null;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiter = done;
    });
  }
}

/** Read through a call: an await may have aborted the signal since the last check. */
export function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
