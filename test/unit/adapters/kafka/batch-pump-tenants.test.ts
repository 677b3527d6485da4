import { describe, expect, it, vi } from "vitest";
import type { EachBatchPayload, KafkaMessage, TopicMessages } from "kafkajs";
import { createBatchPump } from "../../../../src/adapters/kafka/batch-pump.js";
import type { EventRunner } from "../../../../src/adapters/kafka/event-runner.js";
import { OutageGate } from "../../../../src/adapters/kafka/outage-gate.js";
import type { TransactionalCommitter } from "../../../../src/adapters/kafka/transactional-committer.js";
import type { Done, Work } from "../../../../src/adapters/kafka/work.js";
import type { TaskCompleted } from "../../../../src/domain/contracts/index.js";
import { createConsumerMetrics } from "../../../../src/observability/consumer-metrics.js";
import { createLogger } from "../../../../src/observability/logger.js";
import { createMetrics } from "../../../../src/observability/metrics.js";
import type { EventFacts } from "../../../../src/pipeline/processing-state.js";

/** A record of `tenant`'s loop `loop` (its loop family), at `offset`. */
function record(offset: number, tenant: string, loop: string): KafkaMessage {
  return {
    key: Buffer.from(loop),
    value: Buffer.from(JSON.stringify({ tenantId: tenant, loopId: loop })),
    headers: {},
    offset: String(offset),
    timestamp: "0",
    attributes: 0,
  };
}

const tick = async (times = 20) => {
  for (let i = 0; i < times; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * The pump on fakes: a runner whose runs end when the test says, each output naming its offset; a
 * deferral that names the offset on the retry topic; a committer that records each commit.
 */
function setup(options: { perTenant: number; maxInFlight?: number; roundMs?: number }) {
  const running = new Map<string, () => void>();
  const ran: string[] = [];
  const commits: { topic: string; nextOffset: string; messages: TopicMessages[] }[] = [];
  const output = (topic: string, offset: string): Done => ({
    messages: [{ topic, messages: [{ value: offset }] }],
    afterCommit: () => undefined,
  });
  const runner = {
    prepare: (work: Work) => {
      const event = JSON.parse(work.message.value?.toString() ?? "{}") as TaskCompleted;
      return Promise.resolve({ event, signature: `sig-${work.message.offset}` } as unknown as EventFacts);
    },
    run: (work: Work) =>
      new Promise<Done>((resolve) => {
        ran.push(work.message.offset);
        running.set(work.message.offset, () => {
          resolve(output("out", work.message.offset));
        });
      }),
    defer: (work: Work) => output("retry", work.message.offset),
    decode: () => Promise.reject(new Error("not used")),
  } as unknown as EventRunner;
  const committer = {
    commit: (topic: string, _partition: number, nextOffset: string, messages: TopicMessages[]) => {
      commits.push({ topic, nextOffset, messages });
      return Promise.resolve();
    },
  } as unknown as TransactionalCommitter;
  const metrics = createMetrics();
  const pump = createBatchPump({
    committer,
    runner,
    outage: new OutageGate({ onEnter: () => undefined, onLeave: () => undefined }),
    logger: createLogger("silent"),
    metrics,
    consumerMetrics: createConsumerMetrics(metrics.registry),
    maxInFlight: options.maxInFlight ?? 8,
    maxInFlightPerPartition: 8,
    maxInFlightPerTenant: options.perTenant,
    retryTopic: "retry",
    // A round longer than any test: a batch ends when all of it is committed, unless a test says.
    roundMs: options.roundMs ?? 600_000,
    isDraining: () => false,
  });
  const resolved: string[] = [];
  const pumpBatch = (topic: string, messages: KafkaMessage[]) =>
    pump.eachBatch({
      batch: { topic, partition: 0, messages },
      resolveOffset: (offset: string) => resolved.push(offset),
      heartbeat: () => Promise.resolve(),
      isRunning: () => true,
      isStale: () => false,
    } as unknown as EachBatchPayload);
  const finish = async (offset: string) => {
    const end = running.get(offset);
    if (!end) throw new Error(`offset ${offset} is not running`);
    running.delete(offset);
    end();
    await tick();
  };
  /** Every output committed, as topic:offset, in commit order. */
  const committed = () =>
    commits.flatMap((c) => c.messages.flatMap((m) => m.messages.map((x) => `${m.topic}:${String(x.value)}`)));
  return { pumpBatch, finish, ran, committed, commits, resolved };
}

describe("the batch pump: a tenant's share of the events in flight", () => {
  it("hands a flooding tenant's events over its share to the retry topic, so another tenant's event is not queued behind them", async () => {
    const { pumpBatch, finish, ran, committed, commits } = setup({ perTenant: 2 });
    // Tenant a floods the partition (ten loops), tenant b's one event comes after.
    const messages = [
      ...Array.from({ length: 10 }, (_, i) => record(i, "a", `a-loop-${String(i)}`)),
      record(10, "b", "b-loop"),
    ];
    const pumped = pumpBatch("in", messages);
    await tick();
    // a runs two (its share), b's event runs at once; a's other eight are not run here.
    expect(ran).toEqual(["0", "1", "10"]);
    await finish("10");
    await finish("0");
    await finish("1");
    await pumped;
    expect(committed()).toEqual([
      "out:0",
      "out:1",
      ...Array.from({ length: 8 }, (_, i) => `retry:${String(i + 2)}`),
      "out:10",
    ]);
    expect(commits.at(-1)?.nextOffset).toBe("11");
  });

  it("sends a loop family's later events after the ones it deferred, even once the tenant is under its share", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 1 });
    const first = pumpBatch("in", [record(0, "a", "loop-x"), record(1, "a", "loop-y")]);
    await tick();
    expect(ran).toEqual(["0"]);
    await finish("0");
    await first;
    // A minute later tenant a is no longer being deferred and has nothing in flight; loop-y's next
    // event still follows its first to the retry topic, loop-z's runs.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      const second = pumpBatch("in", [record(2, "a", "loop-y"), record(3, "a", "loop-z")]);
      await tick();
      expect(ran).toEqual(["0", "3"]);
      await finish("3");
      await second;
    } finally {
      vi.useRealTimers();
    }
    expect(committed()).toEqual(["out:0", "retry:1", "retry:2", "out:3"]);
  });

  it("ends a batch after its round and commits its events still running with the partition's next batch", async () => {
    const { pumpBatch, finish, ran, committed, resolved } = setup({ perTenant: 1, roundMs: 0 });
    // Deferred events of tenant a on the retry topic are processed there as its share allows.
    const messages = [record(0, "a", "l0"), record(1, "a", "l1"), record(2, "b", "l2")];
    await pumpBatch("retry", messages);
    // The round is over at once: a's first and b's event run on, nothing is committed yet.
    expect(ran).toEqual(["0", "2"]);
    expect(committed()).toEqual([]);
    await finish("0");
    await finish("2");
    // The partition's next batch fetches again what is not committed: known offsets are not run
    // again, the done ones are committed, and a's next event starts.
    await pumpBatch("retry", messages);
    expect(committed()).toEqual(["out:0"]);
    expect(resolved).toEqual(["0"]);
    expect(ran).toEqual(["0", "2", "1"]);
    await finish("1");
    await pumpBatch("retry", messages.slice(1));
    expect(committed()).toEqual(["out:0", "out:1", "out:2"]);
    expect(resolved).toEqual(["0", "2"]);
    expect(ran).toEqual(["0", "2", "1"]);
  });

  it("starts the partition anew when the fetch skipped what it held (another member committed it)", async () => {
    const { pumpBatch, ran } = setup({ perTenant: 0, roundMs: 0 });
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "a", "l1")]);
    expect(ran).toEqual(["0", "1"]);
    // Offsets 0 and 1 never committed here, yet the fetch begins at 5: they are not ours to commit.
    await pumpBatch("in", [record(5, "a", "l0"), record(6, "b", "l2")]);
    expect(ran).toEqual(["0", "1", "5", "6"]);
  });

  it("keeps handing a tenant's new input events to the retry topic while it was deferred lately, though under its share", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 1 });
    const first = pumpBatch("in", [record(0, "a", "l0"), record(1, "a", "l1")]);
    await tick();
    await finish("0");
    await first;
    // Tenant a has nothing in flight; its new event still goes after its deferred one, b's runs.
    const second = pumpBatch("in", [record(2, "a", "l2"), record(3, "b", "l3")]);
    await tick();
    expect(ran).toEqual(["0", "3"]);
    await finish("3");
    await second;
    expect(committed()).toEqual(["out:0", "retry:1", "retry:2", "out:3"]);
  });

  it("shares nothing with a share of 0: every event runs where it is", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 0 });
    const pumped = pumpBatch("in", [record(0, "a", "l0"), record(1, "a", "l1"), record(2, "b", "l2")]);
    await tick();
    expect(ran).toEqual(["0", "1", "2"]);
    for (const offset of ["0", "1", "2"]) await finish(offset);
    await pumped;
    expect(committed()).toEqual(["out:0", "out:1", "out:2"]);
  });
});
