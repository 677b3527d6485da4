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
export function record(offset: number, tenant: string, loop: string): KafkaMessage {
  return {
    key: Buffer.from(loop),
    value: Buffer.from(JSON.stringify({ tenantId: tenant, loopId: loop })),
    headers: {},
    offset: String(offset),
    timestamp: "0",
    attributes: 0,
  };
}

export const tick = async (times = 20) => {
  for (let i = 0; i < times; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * The pump on fakes: a runner whose runs end when the test says, each output naming its offset; a
 * deferral that names the offset on the retry topic; a committer that records each commit.
 */
export function setup(options: {
  perTenant: number;
  maxInFlight?: number;
  roundMs?: number;
  handOverAfterMs?: number;
  maxHeldPerPartition?: number;
  maxHeldBytesPerPartition?: number;
}) {
  const running = new Map<string, (error?: Error) => void>();
  const signals = new Map<string, AbortSignal>();
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
    run: (work: Work, signal: AbortSignal) =>
      new Promise<Done>((resolve, reject) => {
        ran.push(work.message.offset);
        signals.set(work.message.offset, signal);
        running.set(work.message.offset, (error?: Error) => {
          if (error) reject(error);
          else resolve(output("out", work.message.offset));
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
    ...(options.handOverAfterMs !== undefined ? { handOverAfterMs: options.handOverAfterMs } : {}),
    ...(options.maxHeldPerPartition !== undefined
      ? { maxHeldPerPartition: options.maxHeldPerPartition }
      : {}),
    ...(options.maxHeldBytesPerPartition !== undefined
      ? { maxHeldBytesPerPartition: options.maxHeldBytesPerPartition }
      : {}),
    isDraining: () => false,
  });
  const resolved: string[] = [];
  /** A fetch of `messages`, from `fetchedOffset` (kafkajs's fetch position; the first one's offset unless said). */
  const pumpBatch = (topic: string, messages: KafkaMessage[], fetchedOffset = messages[0]?.offset) =>
    pump.eachBatch({
      batch: { topic, partition: 0, messages, fetchedOffset },
      resolveOffset: (offset: string) => resolved.push(offset),
      heartbeat: () => Promise.resolve(),
      isRunning: () => true,
      isStale: () => false,
    } as unknown as EachBatchPayload);
  const finish = async (offset: string, error?: Error) => {
    const end = running.get(offset);
    if (!end) throw new Error(`offset ${offset} is not running`);
    running.delete(offset);
    end(error);
    await tick();
  };
  /** Every output committed, as topic:offset, in commit order. */
  const committed = () =>
    commits.flatMap((c) => c.messages.flatMap((m) => m.messages.map((x) => `${m.topic}:${String(x.value)}`)));
  return { pumpBatch, finish, ran, committed, commits, resolved, signals, pump };
}
