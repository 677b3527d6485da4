import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { stopIdleRequestQueuePolling } from "../../../../src/adapters/kafka/request-queue-idle.js";

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  scheduleCheckPendingRequests(): void;
  destroy(): void;
}
const require = createRequire(import.meta.url);
const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as new (options: object) => Queue;
const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
const queue = (): Queue =>
  new RequestQueue({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: "t",
    broker: "b:9092",
    logger: silent,
  });

describe("kafkajs' request queue when idle", () => {
  it("schedules no check with nothing pending and no throttle (kafkajs 2.2.4 did, every 1 ms)", () => {
    // kafkajs as installed: an idle queue arms a timer (the 1 ms loop).
    const before = queue();
    before.scheduleCheckPendingRequests();
    const armed = before.throttleCheckTimeoutId !== null;
    before.destroy();
    expect(stopIdleRequestQueuePolling()).toBe(true);
    const idle = queue();
    idle.scheduleCheckPendingRequests();
    expect({ armedBefore: armed, armedNow: idle.throttleCheckTimeoutId !== null }).toEqual({
      armedBefore: true,
      armedNow: false,
    });
    idle.destroy();
  });

  it("still checks pending requests, and a throttled queue when its throttle ends", () => {
    stopIdleRequestQueuePolling();
    const pending = queue();
    pending.pending.push({});
    pending.scheduleCheckPendingRequests();
    expect(pending.throttleCheckTimeoutId).not.toBeNull();
    pending.pending.length = 0;
    pending.destroy();
    const throttled = queue();
    throttled.throttledUntil = Date.now() + 5_000;
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
    throttled.destroy();
  });
});
