import type { Producer, TopicMessages } from "kafkajs";
import type { Logger } from "../../observability/logger.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import { splitBySize, type SizeLimits } from "./record-size.js";

export interface TransactionalCommitterOptions {
  /** Builds the transactional producer (`transactionalId` set); called again to replace a broken one. */
  newProducer: () => Producer;
  groupId: string;
  limits: SizeLimits;
  logger: Logger;
  transactions: ConsumerMetrics["transactions"];
  replacements: ConsumerMetrics["producerReplacements"];
}

interface CommitRequest {
  topic: string;
  partition: number;
  nextOffset: string;
  messages: TopicMessages[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** kafkajs reports a newer producer with our transactional id this way: we are a zombie, stop. */
export function isFenced(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const type = (e as { type?: unknown }).type;
    if (
      type === "INVALID_PRODUCER_EPOCH" ||
      type === "PRODUCER_FENCED" ||
      type === "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    )
      return true;
  }
  return false;
}

/**
 * Commits consumed offsets together with the records they produced, in one Kafka transaction at a
 * time; requests from every partition that arrive while one runs share the next. Each transaction
 * is sent in pieces that respect the topics' `max.message.bytes` and the request limit, so no
 * batch of outputs, however many, is refused as too large.
 *
 * A failed transaction is aborted and its requests rejected (the caller retries them). The
 * producer is then replaced before the next one: after a refused produce request kafkajs' idempotent
 * producer keeps sequence numbers the broker never accepted, and every later request would fail
 * with "out of order sequence number". A new producer with the same transactional id starts a new
 * epoch with fresh sequences.
 */
export function createTransactionalCommitter(options: TransactionalCommitterOptions) {
  const { logger, limits } = options;
  let producer = options.newProducer();
  let connected = false;
  let broken = false;
  const queue: CommitRequest[] = [];
  let committing = false;

  function watch(p: Producer): void {
    p.on(p.events.CONNECT, () => {
      if (p === producer) connected = true;
    });
    p.on(p.events.DISCONNECT, () => {
      if (p === producer) connected = false;
    });
  }
  watch(producer);

  async function replaceProducer(): Promise<void> {
    const old = producer;
    producer = options.newProducer();
    watch(producer);
    await old.disconnect().catch((err: unknown) => {
      logger.warn({ err }, "could not disconnect the replaced producer");
    });
    await producer.connect();
    broken = false;
    options.replacements.inc();
    logger.info("transactional producer replaced after a failed transaction");
  }

  async function runTransaction(requests: CommitRequest[]): Promise<void> {
    if (broken) await replaceProducer();
    const transaction = await producer.transaction();
    try {
      const messages = requests.flatMap((r) => r.messages);
      for (const topicMessages of splitBySize(messages, limits)) {
        await transaction.sendBatch({ topicMessages });
      }
      const offsets = new Map<string, { partition: number; offset: string }[]>();
      for (const request of requests) {
        offsets.set(request.topic, [
          ...(offsets.get(request.topic) ?? []),
          { partition: request.partition, offset: request.nextOffset },
        ]);
      }
      await transaction.sendOffsets({
        consumerGroupId: options.groupId,
        topics: [...offsets].map(([topic, partitions]) => ({ topic, partitions })),
      });
      await transaction.commit();
      options.transactions.inc({ result: "committed" });
    } catch (err) {
      options.transactions.inc({ result: "aborted" });
      await transaction.abort().catch((abortErr: unknown) => {
        logger.warn({ err: abortErr }, "transaction abort failed");
      });
      if (!isFenced(err)) broken = true;
      throw err;
    }
  }

  async function pump(): Promise<void> {
    if (committing) return;
    committing = true;
    try {
      while (queue.length > 0) {
        const requests = queue.splice(0, queue.length);
        try {
          await runTransaction(requests);
          for (const request of requests) request.resolve();
        } catch (err) {
          for (const request of requests) request.reject(err);
        }
      }
    } finally {
      committing = false;
    }
  }

  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),
    isConnected: () => connected,

    /** Commits `nextOffset` of the partition with `messages`, in the next transaction. */
    commit(topic: string, partition: number, nextOffset: string, messages: TopicMessages[]): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        queue.push({ topic, partition, nextOffset, messages, resolve, reject });
        void pump();
      });
    },
  };
}

export type TransactionalCommitter = ReturnType<typeof createTransactionalCommitter>;
