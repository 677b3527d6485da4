import { describe, expect, it } from "vitest";
import type { KafkaMessage, TopicMessages } from "kafkajs";
import { EventPhases } from "../../../../src/adapters/kafka/event-phases.js";
import { createPartitionCommit } from "../../../../src/adapters/kafka/partition-commit.js";
import type { TransactionalCommitter } from "../../../../src/adapters/kafka/transactional-committer.js";
import type { Done, Work } from "../../../../src/adapters/kafka/work.js";
import { createConsumerMetrics } from "../../../../src/observability/consumer-metrics.js";
import { createLogger } from "../../../../src/observability/logger.js";
import { createMetrics } from "../../../../src/observability/metrics.js";
import { PartitionScheduler } from "../../../../src/adapters/kafka/ordered-scheduler.js";

const flush = () => new Promise((resolve) => setImmediate(resolve));

function work(offset: string): Work {
  const message = {
    key: null,
    value: null,
    headers: {},
    offset,
    timestamp: "0",
    attributes: 0,
  } as KafkaMessage;
  return { topic: "in", partition: 0, message, event: null, signature: null };
}

/** A partition of `offsets`, each with one output, and a committer whose answers the test gives. */
function setup(offsets: string[], answers: (() => Promise<void>)[] = []) {
  const scheduler = new PartitionScheduler<Work, Done>(offsets.length);
  const afterCommit: string[] = [];
  for (const offset of offsets) scheduler.add(offset, null, work(offset));
  const calls: { nextOffset: string; messages: TopicMessages[] }[] = [];
  const committer = {
    commit: (_topic: string, _partition: number, nextOffset: string, messages: TopicMessages[]) => {
      calls.push({ nextOffset, messages });
      return (answers.shift() ?? (() => Promise.resolve()))();
    },
  } as unknown as TransactionalCommitter;
  const resolved: string[] = [];
  const failures: Error[] = [];
  const abandon = new AbortController();
  const phases = new Map(offsets.map((o) => [o, new EventPhases(0, 0)]));
  const commit = createPartitionCommit({
    committer,
    topic: "in",
    partition: 0,
    scheduler,
    phases,
    committed: (offset) => resolved.push(offset),
    signal: abandon.signal,
    consumerMetrics: createConsumerMetrics(createMetrics().registry),
    log: createLogger("silent"),
    fail: (error) => failures.push(error),
    notify: () => undefined,
  });
  const finish = (offset: string) => {
    const runnable = scheduler.next();
    expect(runnable?.offset).toBe(offset);
    scheduler.complete(offset, {
      messages: [{ topic: "out", messages: [{ value: offset }] }],
      afterCommit: () => afterCommit.push(offset),
    });
  };
  return { scheduler, commit, calls, resolved, failures, afterCommit, abandon, phases, finish };
}

describe("a partition's commits", () => {
  it("commits the contiguous completed prefix with its outputs, then resolves its last offset", async () => {
    const p = setup(["5", "6", "7"]);
    p.finish("5");
    p.finish("6");
    p.commit.commitReady();
    expect(p.commit.busy()).toBe(true);
    await flush();
    expect(p.calls).toEqual([
      {
        nextOffset: "7",
        messages: [
          { topic: "out", messages: [{ value: "5" }] },
          { topic: "out", messages: [{ value: "6" }] },
        ],
      },
    ]);
    expect(p.resolved).toEqual(["6"]);
    expect(p.afterCommit).toEqual(["5", "6"]);
    expect([...p.phases.keys()]).toEqual(["7"]);
    expect(p.commit.busy()).toBe(false);
    expect(p.scheduler.committable()).toBeNull();
  });

  it("starts no second transaction while one is under way", async () => {
    let release: () => void = () => undefined;
    const p = setup(["1", "2"], [() => new Promise<void>((resolve) => (release = resolve))]);
    p.finish("1");
    p.commit.commitReady();
    p.finish("2");
    p.commit.commitReady();
    expect(p.calls).toHaveLength(1);
    release();
    await flush();
    p.commit.commitReady();
    await flush();
    expect(p.calls.map((c) => c.nextOffset)).toEqual(["2", "3"]);
    expect(p.resolved).toEqual(["1", "2"]);
  });

  it("retries a failed transaction with the next look, and gives up after 20 in a row", async () => {
    const p = setup(
      ["1"],
      Array.from({ length: 20 }, () => () => Promise.reject(new Error("broker away"))),
    );
    p.finish("1");
    for (let i = 0; i < 19; i += 1) {
      p.commit.commitReady();
      await flush();
    }
    expect(p.failures).toEqual([]);
    p.commit.commitReady();
    await flush();
    expect(p.calls).toHaveLength(20);
    expect(p.failures.map((e) => e.message)).toEqual(["broker away"]);
    expect(p.resolved).toEqual([]);
  });

  it("fails the batch at once when the producer was fenced", async () => {
    const fenced = Object.assign(new Error("fenced"), { type: "PRODUCER_FENCED" });
    const p = setup(["1"], [() => Promise.reject(fenced)]);
    p.finish("1");
    p.commit.commitReady();
    await flush();
    expect(p.failures).toEqual([fenced]);
  });

  it("changes nothing when the batch was given up while its transaction ran", async () => {
    const p = setup(["1"]);
    p.finish("1");
    p.commit.commitReady();
    p.abandon.abort();
    await flush();
    expect(p.resolved).toEqual([]);
    expect(p.afterCommit).toEqual([]);
    expect(p.scheduler.committable()?.nextOffset).toBe("2");
    p.commit.commitReady();
    expect(p.calls).toHaveLength(1);
  });
});
