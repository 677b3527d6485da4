import { afterEach, describe, expect, it, vi } from "vitest";
import type { Kafka } from "kafkajs";
import type { EventRunner } from "../../../../src/adapters/kafka/event-runner.js";
import { OutageGate } from "../../../../src/adapters/kafka/outage-gate.js";
import { createTaskConsumer } from "../../../../src/adapters/kafka/task-consumer.js";
import type { TransactionalCommitter } from "../../../../src/adapters/kafka/transactional-committer.js";
import { createConsumerMetrics } from "../../../../src/observability/consumer-metrics.js";
import { createLogger } from "../../../../src/observability/logger.js";
import { createMetrics } from "../../../../src/observability/metrics.js";

const events = {
  GROUP_JOIN: "consumer.group_join",
  REBALANCING: "consumer.rebalancing",
  STOP: "consumer.stop",
  CRASH: "consumer.crash",
} as const;

/** A kafkajs consumer that only reports group events, which the test emits. */
function fakeKafka() {
  const listeners = new Map<string, ((event: { payload: unknown }) => void)[]>();
  const consumer = {
    events,
    on: (name: string, listener: (event: { payload: unknown }) => void) => {
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
    },
    connect: () => Promise.resolve(),
    subscribe: () => Promise.resolve(),
    run: () => Promise.resolve(),
    pause: () => undefined,
    resume: () => undefined,
    disconnect: () => Promise.resolve(),
  };
  const emit = (name: string, payload: unknown) => {
    for (const listener of listeners.get(name) ?? []) listener({ payload });
  };
  return { kafka: { consumer: () => consumer } as unknown as Kafka, emit };
}

function setup() {
  const { kafka, emit } = fakeKafka();
  const metrics = createMetrics();
  const consumerMetrics = createConsumerMetrics(metrics.registry);
  const consumer = createTaskConsumer({
    kafka,
    committer: {} as TransactionalCommitter,
    runner: {} as EventRunner,
    outage: new OutageGate({ onEnter: () => undefined, onLeave: () => undefined }),
    groupId: "g",
    topic: "in",
    retryTopic: "retry",
    fromBeginning: true,
    logger: createLogger("silent"),
    metrics,
    consumerMetrics,
    maxInFlight: 4,
    maxInFlightPerPartition: 2,
    maxInFlightPerTenant: 2,
    sessionTimeoutMs: 10_000,
    rejoinDeadlineMs: 60_000,
  });
  const crashes: Error[] = [];
  // Registered before start: a listener given this early used to be dropped.
  consumer.onCrash((error) => crashes.push(error));
  const assigned = async () => (await consumerMetrics.assignedPartitions.get()).values[0]?.value;
  return { consumer, emit, crashes, assigned };
}

describe("task consumer: membership of its group", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is ready once it joins, with its assigned partitions counted", async () => {
    const { consumer, emit, assigned } = setup();
    await consumer.start();
    expect(consumer.isReady()).toBe(false);
    emit(events.GROUP_JOIN, { memberAssignment: { in: [0, 1, 2], retry: [0] } });
    expect(consumer.isReady()).toBe(true);
    expect(await assigned()).toBe(4);
  });

  it("reports a crash to listeners registered before start", async () => {
    const { consumer, emit, crashes } = setup();
    await consumer.start();
    emit(events.CRASH, { error: new Error("out of order sequence number") });
    expect(crashes.map((e) => e.message)).toEqual(["out of order sequence number"]);
    expect(consumer.isReady()).toBe(false);
  });

  it("out of its group past the deadline, it reports a crash so the process restarts", async () => {
    vi.useFakeTimers();
    const { consumer, emit, crashes, assigned } = setup();
    await consumer.start();
    emit(events.GROUP_JOIN, { memberAssignment: { in: [0] } });
    emit(events.REBALANCING, {});
    expect(consumer.isReady()).toBe(false);
    expect(await assigned()).toBe(0);
    vi.advanceTimersByTime(59_000);
    expect(crashes).toHaveLength(0);
    vi.advanceTimersByTime(2_000);
    expect(crashes[0]?.message).toMatch(/not been a member of its group for 60000 ms \(rebalancing\)/);
  });

  it("back in its group in time, nothing is reported", async () => {
    vi.useFakeTimers();
    const { consumer, emit, crashes } = setup();
    await consumer.start();
    emit(events.REBALANCING, {});
    vi.advanceTimersByTime(30_000);
    emit(events.GROUP_JOIN, { memberAssignment: { in: [1] } });
    vi.advanceTimersByTime(120_000);
    expect(crashes).toHaveLength(0);
    expect(consumer.isReady()).toBe(true);
  });
});
