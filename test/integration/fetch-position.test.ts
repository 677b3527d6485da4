import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRunner } from "../../src/adapters/kafka/event-runner.js";
import { OutageGate } from "../../src/adapters/kafka/outage-gate.js";
import { createProducer } from "../../src/adapters/kafka/producers.js";
import { createTaskConsumer } from "../../src/adapters/kafka/task-consumer.js";
import { createTransactionalCommitter } from "../../src/adapters/kafka/transactional-committer.js";
import type { Done, Work } from "../../src/adapters/kafka/work.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { createConsumerMetrics } from "../../src/observability/consumer-metrics.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics } from "../../src/observability/metrics.js";
import type { EventFacts } from "../../src/pipeline/processing-state.js";
import { startHarness, type Harness } from "../support/harness.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The task consumer's fetch position on the real Kafka: a partition's first event runs until the
 * test ends it, and the records after it (more than kafkajs fetches at once from one offset, 1 MiB)
 * are still fetched and run; once the first ends, the offsets are committed to the end.
 */
describe("the task consumer's fetch position", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ startApp: false, env: { TOPIC_PARTITIONS: "1" } });
  }, 120_000);
  afterAll(async () => {
    await h.close();
  });

  it("fetches and runs the records behind a running event beyond one fetch's bytes, and commits them all once it ends", async () => {
    const topic = h.config.topics.taskCompleted;
    const count = 400;
    const padding = "x".repeat(5_000);
    const producer = h.kafka.producer();
    await producer.connect();
    // In requests of 100 (under the broker's 1 MB per request).
    for (let from = 0; from < count; from += 100) {
      await producer.send({
        topic,
        messages: Array.from({ length: 100 }, (_, k) => from + k).map((i) => ({
          key: `loop-${String(i)}`,
          value: JSON.stringify({ tenantId: "t", loopId: `loop-${String(i)}`, padding }),
        })),
      });
    }
    await producer.disconnect();

    const ran = new Set<string>();
    let endFirst: () => void = () => undefined;
    const done = (): Done => ({ messages: [], afterCommit: () => undefined });
    const runner = {
      prepare: (work: Work) => {
        const event = JSON.parse(work.message.value?.toString() ?? "{}") as TaskCompleted;
        return Promise.resolve({ event, signature: work.message.offset } as unknown as EventFacts);
      },
      run: (work: Work) => {
        ran.add(work.message.offset);
        if (work.message.offset !== "0") return Promise.resolve(done());
        return new Promise<Done>((resolve) => {
          endFirst = () => {
            resolve(done());
          };
        });
      },
      defer: () => null,
      decode: () => Promise.reject(new Error("not used")),
    } as unknown as EventRunner;
    const metrics = createMetrics();
    const consumerMetrics = createConsumerMetrics(metrics.registry);
    const logger = createLogger("silent");
    const groupId = `fetch-position-${h.id}`;
    const committer = createTransactionalCommitter({
      newProducer: () => createProducer(h.kafka, { transactionalId: `${groupId}.tx` }),
      groupId,
      limits: { topicBytes: () => 1_048_588, requestBytes: 1_048_576 },
      logger,
      transactions: consumerMetrics.transactions,
      replacements: consumerMetrics.producerReplacements,
    });
    await committer.connect();
    const consumer = createTaskConsumer({
      kafka: h.kafka,
      committer,
      runner,
      outage: new OutageGate({ onEnter: () => undefined, onLeave: () => undefined }),
      groupId,
      topic,
      retryTopic: h.config.topics.retry,
      fromBeginning: true,
      logger,
      metrics,
      consumerMetrics,
      maxInFlight: 64,
      maxInFlightPerPartition: 64,
      maxInFlightPerTenant: 0,
    });
    const admin = h.kafka.admin();
    await admin.connect();
    const committedTo = async () => {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return offsets?.partitions[0]?.offset ?? "-1";
    };
    try {
      await consumer.start();
      // 400 records of 5 KB: about 2 MB behind the first, which still runs.
      await waitFor(() => (ran.has(String(count - 1)) ? true : undefined), {
        timeoutMs: 60_000,
        what: "the last record run while the first still runs",
      });
      expect(await committedTo()).toBe("-1");
      endFirst();
      await waitFor(async () => ((await committedTo()) === String(count) ? true : undefined), {
        timeoutMs: 30_000,
        what: "every offset committed",
      });
      expect(ran.size).toBe(count);
    } finally {
      await consumer.stop(5_000);
      await committer.disconnect();
      await admin.disconnect();
    }
  }, 120_000);
});
