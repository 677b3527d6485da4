import type { Admin } from "kafkajs";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLagMetrics } from "../../../../../src/observability/lag-metrics.js";
import { createLogger } from "../../../../../src/observability/logger.js";
import { createLagPoller } from "../../../../../src/adapters/kafka/admin/lag-poller.js";

/** An admin client that answers from `state` (one topic, two partitions) or throws when told to. */
/** The log offsets of the fake topic, or a failure when told to. */
function fakeLogOffsets(state: { high: number[]; fail: boolean; calls: number }) {
  return () => {
    state.calls += 1;
    if (state.fail) return Promise.reject(new Error("broker unreachable"));
    return Promise.resolve(state.high.map((high, partition) => ({ partition, low: 0, high })));
  };
}

function fakeAdmin(state: { committed: number[]; high: number[]; fail: boolean; calls: number }): Admin {
  const admin = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    fetchOffsets: () =>
      Promise.resolve([
        {
          topic: "tasks",
          partitions: state.committed.map((offset, partition) => ({ partition, offset: String(offset) })),
        },
      ]),
    describeGroups: () => Promise.resolve({ groups: [{ state: "Empty", members: [] }] }),
    // Everything pending was appended 30 s ago.
    fetchTopicOffsetsByTimestamp: (_topic: string, timestamp: number) =>
      Promise.resolve(
        state.high.map((high, partition) => ({
          partition,
          offset: String(timestamp < Date.now() - 30_000 ? (state.committed[partition] ?? 0) : high),
        })),
      ),
  };
  return admin as unknown as Admin;
}

async function gauge(registry: Registry, name: string) {
  return ((await registry.getSingleMetric(name)?.get())?.values ?? []).map((v) => [
    v.labels.partition,
    v.value,
  ]);
}

describe("the lag poller", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup(intervalMs: number) {
    const state = { committed: [3, -1], high: [10, 4], fail: false, calls: 0 };
    const registry = new Registry();
    const poller = createLagPoller({
      admin: fakeAdmin(state),
      logOffsets: fakeLogOffsets(state),
      metrics: createLagMetrics(registry),
      logger: createLogger("silent"),
      intervalMs,
      groupId: "reflector",
      topics: ["tasks"],
      fromBeginning: true,
    });
    return { state, registry, poller };
  }

  it("exports at start, then on every interval; stop ends it", async () => {
    const { state, registry, poller } = setup(1_000);
    poller.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(await gauge(registry, "reflector_consumer_lag_messages")).toEqual([
      ["0", 7],
      // Nothing committed, reading from the beginning: the whole retained log is pending.
      ["1", 4],
    ]);
    expect(await gauge(registry, "reflector_consumer_committed_offset")).toEqual([["0", 3]]);
    expect(await gauge(registry, "reflector_consumer_log_end_offset")).toEqual([
      ["0", 10],
      ["1", 4],
    ]);
    const seconds = await gauge(registry, "reflector_consumer_lag_seconds");
    expect(seconds.every(([, v]) => Number(v) >= 30 && Number(v) < 61)).toBe(true);

    state.committed = [10, 4];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await gauge(registry, "reflector_consumer_lag_messages")).toEqual([
      ["0", 0],
      ["1", 0],
    ]);
    const before = state.calls;
    await poller.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(state.calls).toBe(before);
  });

  it("counts a failed refresh, keeps the last values and goes on", async () => {
    const { state, registry, poller } = setup(1_000);
    poller.start();
    await vi.advanceTimersByTimeAsync(0);
    state.fail = true;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await gauge(registry, "reflector_consumer_lag_refresh_errors_total")).toEqual([[undefined, 2]]);
    expect(await gauge(registry, "reflector_consumer_lag_messages")).toEqual([
      ["0", 7],
      ["1", 4],
    ]);
    state.fail = false;
    state.committed = [10, 4];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await gauge(registry, "reflector_consumer_lag_messages")).toEqual([
      ["0", 0],
      ["1", 0],
    ]);
    await poller.stop();
  });

  it("does nothing with an interval of 0", async () => {
    const { state, poller } = setup(0);
    poller.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(state.calls).toBe(0);
    await poller.stop();
  });
});
