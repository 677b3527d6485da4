import { createRequire } from "node:module";

/**
 * kafkajs 2.2.4 keeps a 1 ms timer running on every broker connection for as long as it is open:
 * after each answer its request queue schedules a check of its pending requests, and with nothing
 * pending and no throttle the delay it computes is negative, which Node runs after 1 ms (and warns
 * about, `TimeoutNegativeWarning`, on Node 24); the check schedules the next one. Measured here, the
 * processor idle for 10 s spent 432 ms of CPU with it and 122 ms without; five idle producers, 220
 * against 24–55 ms per 5 s. Reported upstream (tulios/kafkajs issues #1704 and #1751, open with
 * unmerged fixes; the project has had no release since 2.2.4).
 *
 * The check is scheduled only when it has something to do: requests are pending (at kafkajs' own
 * 10 ms, or when a broker's throttle ends), or a throttle is running. A request that finds the
 * queue free is sent at once and one that has to wait schedules the check when it is queued, both
 * as before; an answer still checks the queue at once. Applied once, to the version it was read
 * from only: another version is left alone.
 */
interface RequestQueueShape {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs' own interval for a queue with pending requests and no throttle. */
const checkPendingMs = 10;
const fixedVersion = "2.2.4";
const require = createRequire(import.meta.url);

function scheduleWhenNeeded(this: RequestQueueShape): void {
  if (this.throttleCheckTimeoutId) return;
  const throttled = this.throttledUntil - Date.now();
  if (this.pending.length === 0 && throttled <= 0) return;
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    throttled > 0 ? throttled : checkPendingMs,
  );
}

let applied: boolean | null = null;

/** Stops kafkajs' idle 1 ms polling (once per process); false when the installed kafkajs is another version. */
export function stopIdleRequestQueuePolling(): boolean {
  if (applied !== null) return applied;
  const { version } = require("kafkajs/package.json") as { version: string };
  applied = version === fixedVersion;
  if (applied) {
    const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as {
      prototype: RequestQueueShape;
    };
    RequestQueue.prototype.scheduleCheckPendingRequests = scheduleWhenNeeded;
  }
  return applied;
}
