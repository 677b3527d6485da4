import { describe, expect, it } from "vitest";
import type { Producer, TopicMessages } from "kafkajs";
import { Counter, Registry } from "prom-client";
import { createTransactionalCommitter } from "../../../../src/adapters/kafka/transactional-committer.js";
import { createLogger } from "../../../../src/observability/logger.js";

interface Log {
  producers: number;
  sends: { producer: number; topics: string[]; count: number }[];
  commits: number;
  aborts: number;
}

/** A transactional producer that records what it is asked to do; `failNext` refuses one send. */
function fakeProducers(log: Log, failNext: { error: Error | null }) {
  return (): Producer => {
    log.producers += 1;
    const id = log.producers;
    return {
      events: { CONNECT: "connect", DISCONNECT: "disconnect" },
      on: () => () => undefined,
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(),
      transaction: () =>
        Promise.resolve({
          sendBatch: ({ topicMessages }: { topicMessages: TopicMessages[] }) => {
            if (failNext.error) {
              const error = failNext.error;
              failNext.error = null;
              return Promise.reject(error);
            }
            log.sends.push({
              producer: id,
              topics: topicMessages.map((t) => t.topic),
              count: topicMessages.reduce((n, t) => n + t.messages.length, 0),
            });
            return Promise.resolve([]);
          },
          sendOffsets: () => Promise.resolve(),
          commit: () => {
            log.commits += 1;
            return Promise.resolve();
          },
          abort: () => {
            log.aborts += 1;
            return Promise.resolve();
          },
        }),
    } as unknown as Producer;
  };
}

function setup() {
  const log: Log = { producers: 0, sends: [], commits: 0, aborts: 0 };
  const failNext: { error: Error | null } = { error: null };
  const registry = new Registry();
  const committer = createTransactionalCommitter({
    newProducer: fakeProducers(log, failNext),
    groupId: "g",
    limits: { topicBytes: () => 100_000, requestBytes: 1_000_000 },
    logger: createLogger("silent"),
    transactions: new Counter({ name: "t", help: "t", labelNames: ["result"], registers: [registry] }),
    replacements: new Counter({ name: "r", help: "r", registers: [registry] }),
  });
  return { committer, log, failNext };
}

const records = (topic: string, n: number, bytes: number): TopicMessages[] => [
  { topic, messages: Array.from({ length: n }, () => ({ key: "k", value: Buffer.alloc(bytes) })) },
];

describe("transactional committer", () => {
  it("sends a transaction in pieces under the topic limit, committing once", async () => {
    const { committer, log } = setup();
    await committer.commit("in", 0, "10", records("out", 10, 30_000));
    expect(log.sends.map((s) => s.count)).toEqual([3, 3, 3, 1]);
    expect(log.commits).toBe(1);
  });

  it("shares one transaction between the requests that wait for it", async () => {
    const { committer, log } = setup();
    await Promise.all([
      committer.commit("in", 0, "1", records("out", 1, 10)),
      committer.commit("in", 1, "5", records("out", 1, 10)),
      committer.commit("in", 2, "9", records("out", 1, 10)),
    ]);
    // The first runs alone; the two that arrived meanwhile share the second.
    expect(log.commits).toBe(2);
  });

  it("aborts a refused transaction and replaces the producer before the next one", async () => {
    const { committer, log, failNext } = setup();
    failNext.error = Object.assign(new Error("message too large"), { type: "MESSAGE_TOO_LARGE" });
    await expect(committer.commit("in", 0, "1", records("out", 1, 10))).rejects.toThrow(/too large/);
    expect(log.aborts).toBe(1);
    await committer.commit("in", 0, "1", records("out", 1, 10));
    expect(log.producers).toBe(2);
    expect(log.sends.at(-1)?.producer).toBe(2);
  });

  it("keeps the producer when it was fenced (the caller stops instead)", async () => {
    const { committer, log, failNext } = setup();
    failNext.error = Object.assign(new Error("fenced"), { type: "PRODUCER_FENCED" });
    await expect(committer.commit("in", 0, "1", records("out", 1, 10))).rejects.toThrow(/fenced/);
    await committer.commit("in", 0, "1", records("out", 1, 10));
    expect(log.producers).toBe(1);
  });
});
