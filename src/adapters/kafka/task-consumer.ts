import type { Consumer, Kafka } from "kafkajs";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import { createBatchPump, type BatchPumpOptions } from "./batch-pump.js";
import type { EventRunner } from "./event-runner.js";
import { createGroupMembership } from "./group-membership.js";
import type { OutageGate } from "./outage-gate.js";
import type { TransactionalCommitter } from "./transactional-committer.js";

export interface TaskConsumerOptions extends Pick<
  BatchPumpOptions,
  "handOverAfterMs" | "maxHeldPerPartition" | "maxHeldBytesPerPartition"
> {
  kafka: Kafka;
  /** Outputs and offsets go out together, one transaction at a time. */
  committer: TransactionalCommitter;
  runner: EventRunner;
  outage: OutageGate;
  groupId: string;
  topic: string;
  /** The input topics, resolved at start (`TENANT_TOPIC_BINDING`); unset: `topic` alone. */
  resolveTopics?: () => Promise<string[]>;
  retryTopic: string;
  fromBeginning: boolean;
  logger: Logger;
  metrics: Metrics;
  consumerMetrics: ConsumerMetrics;
  maxInFlight: number;
  maxInFlightPerPartition: number;
  /** Events one tenant may have in flight at once (0: no share); the rest of an input batch's go to the retry topic. */
  maxInFlightPerTenant: number;
  /** How long a fetched batch is pumped before it ends, its running events carried over (default 1 s). */
  roundMs?: number;
  /** How long the group waits for a silent member (a killed process) before rebalancing. */
  sessionTimeoutMs?: number;
  /**
   * How long the consumer may be out of its group (after a rebalance began or it was removed)
   * before it reports itself crashed, so that the process exits and is restarted.
   */
  rejoinDeadlineMs?: number;
}

/**
 * Reads `agent.task.completed` (and the retry topic) with many events in flight per partition,
 * events of one loop family strictly in order, and commits, per partition, the highest contiguous
 * completed offset together with those events' outputs in one Kafka transaction
 * (docs/delivery-guarantees.md). This file is its lifecycle; the group membership
 * (`group-membership.ts`), the batches (`batch-pump.ts`) and their commits
 * (`partition-commit.ts`) are apart.
 */
export function createTaskConsumer(options: TaskConsumerOptions) {
  const { kafka } = options;
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 30_000;
  let consumer: Consumer | null = null;
  let draining = false;
  const isDraining = () => draining;
  const membership = createGroupMembership({
    ...options,
    rejoinDeadlineMs: options.rejoinDeadlineMs ?? Math.max(60_000, 3 * sessionTimeoutMs),
    isStopping: isDraining,
  });
  const pump = createBatchPump({ ...options, isDraining });
  let inputs = [options.topic];
  const topics = () => [...inputs, options.retryTopic].map((topic) => ({ topic }));

  return {
    async start(): Promise<void> {
      consumer = kafka.consumer({
        groupId: options.groupId,
        sessionTimeout: sessionTimeoutMs,
        heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)),
        readUncommitted: false,
        allowAutoTopicCreation: false,
        // A crash ends the process; the orchestrator restarts it from the last committed offset.
        retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
      });
      const current = consumer;
      membership.watch(current);
      // A rebalance: the partitions' carried-over work is given up, never committed by a member
      // that may have lost them; kafkajs fetches again from the committed offsets.
      current.on(current.events.REBALANCING, () => {
        pump.reset();
      });
      current.on(current.events.GROUP_JOIN, () => {
        pump.reset();
      });
      await current.connect();
      if (options.resolveTopics) inputs = await options.resolveTopics();
      await current.subscribe({
        topics: [...inputs, options.retryTopic],
        fromBeginning: options.fromBeginning,
      });
      await current.run({
        // Offsets are committed only inside the output transactions (sendOffsets).
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: Math.max(1, Math.min(64, options.maxInFlight)),
        eachBatch: pump.eachBatch,
      });
    },

    /** The input topics subscribed to (the retry topic aside). */
    inputTopics: (): readonly string[] => inputs,

    isReady: () => membership.isJoined() && !draining && !membership.hasCrashed(),

    /** Pause and resume fetching (the outage gate). */
    pause(): void {
      consumer?.pause(topics());
    },
    resume(): void {
      if (!draining) consumer?.resume(topics());
    },

    /**
     * Called once when the consumer stops for good while it should be running: a crash, or out of
     * its group past the rejoin deadline. May be registered before `start`.
     */
    onCrash(listener: (error: Error) => void): void {
      membership.onCrash(listener);
    },

    /**
     * Graceful stop within `deadlineMs`: readiness off, stop fetching, let in-flight events finish
     * and commit them, then leave the group. Work still running at the deadline is abandoned
     * uncommitted (the next owner redoes it; the Postgres writes are idempotent).
     */
    async stop(deadlineMs = 20_000): Promise<void> {
      if (!consumer) return;
      const current = consumer;
      draining = true;
      membership.leave();
      try {
        current.pause(topics());
      } catch {
        // not running (crashed): nothing to pause
      }
      await pump.drain(deadlineMs, membership.hasCrashed);
      consumer = null;
      await current.disconnect();
    },
  };
}

export type TaskConsumer = ReturnType<typeof createTaskConsumer>;
