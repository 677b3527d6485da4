import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from "kafkajs";
import { errorMessage } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import { loopFamilyKey, PartitionScheduler, SlotPool } from "../../pipeline/ordered-scheduler.js";
import type { EventRunner, Done, Work } from "./event-runner.js";
import { EventPhases } from "./event-phases.js";
import type { OutageGate } from "./outage-gate.js";
import { SignatureGate } from "./signature-gate.js";
import { isFenced, type TransactionalCommitter } from "./transactional-committer.js";
import { Abandoned, isAborted, Wakeup } from "./wakeup.js";

export interface TaskConsumerOptions {
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
  /** How long the group waits for a silent member (a killed process) before rebalancing. */
  sessionTimeoutMs?: number;
  /**
   * How long the consumer may be out of its group (after a rebalance began or it was removed)
   * before it reports itself crashed, so that the process exits and is restarted.
   */
  rejoinDeadlineMs?: number;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Reads `agent.task.completed` (and the retry topic) with many events in flight per partition,
 * events of one loop family strictly in order, and commits, per partition, the highest contiguous
 * completed offset together with those events' outputs in one Kafka transaction
 * (docs/delivery-guarantees.md).
 */
export function createTaskConsumer(options: TaskConsumerOptions) {
  const { kafka, committer, runner, outage, logger, metrics, consumerMetrics } = options;
  const slots = new SlotPool(options.maxInFlight);
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 30_000;
  const rejoinDeadlineMs = options.rejoinDeadlineMs ?? Math.max(60_000, 3 * sessionTimeoutMs);
  let consumer: Consumer | null = null;
  let joined = false;
  let draining = false;
  /** Aborted when shutdown gives up on in-flight work. */
  const hardStop = new AbortController();
  let activeBatches = 0;
  const batchesDone = new Wakeup();
  let crashError: unknown = null;
  const crashListeners: ((error: Error) => void)[] = [];
  let outOfGroupTimer: NodeJS.Timeout | null = null;

  function crashed(error: Error): void {
    if (crashError !== null || draining) return;
    crashError = error;
    joined = false;
    metrics.ready.set(0);
    consumerMetrics.assignedPartitions.set(0);
    for (const listener of crashListeners) listener(error);
  }

  /** Out of the group: not ready, and if it does not get back in time, crashed (the process restarts). */
  function leftGroup(why: string): void {
    joined = false;
    metrics.ready.set(0);
    consumerMetrics.assignedPartitions.set(0);
    if (outOfGroupTimer || draining) return;
    outOfGroupTimer = setTimeout(() => {
      outOfGroupTimer = null;
      if (joined || draining) return;
      logger.error({ why, rejoinDeadlineMs }, "consumer not back in its group in time; giving up");
      crashed(
        new Error(
          `the consumer has not been a member of its group for ${String(rejoinDeadlineMs)} ms (${why})`,
        ),
      );
    }, rejoinDeadlineMs);
    outOfGroupTimer.unref();
  }

  function rejoined(partitions: number): void {
    joined = true;
    if (outOfGroupTimer) clearTimeout(outOfGroupTimer);
    outOfGroupTimer = null;
    metrics.ready.set(1);
    consumerMetrics.assignedPartitions.set(partitions);
  }

  // Single flight per new signature (see SignatureGate).
  const signatures = new SignatureGate(50_000);
  const canStart = (work: Work): boolean => work.signature === null || signatures.canStart(work.signature);

  /**
   * Decodes up front, with the event's facts (carried to the run), to find the ordering key (the
   * loop family) and the signature; failures are left to the run.
   */
  async function prepare(
    topic: string,
    partition: number,
    message: KafkaMessage,
  ): Promise<{ key: string | null; work: Work }> {
    const work: Work = { topic, partition, message, event: null, signature: null };
    try {
      const facts = await runner.prepare(work);
      work.event = facts.event;
      work.signature = `${facts.event.tenantId}\u0000${facts.signature}`;
      return { key: loopFamilyKey(facts.event), work };
    } catch {
      // Undecodable now: dead-lettered (no key needed) or retried in the run, ordered by the Kafka key.
      return { key: message.key ? `kafka-key:${message.key.toString()}` : null, work };
    }
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (batch.messages.length === 0) return;
    activeBatches += 1;
    const abandon = new AbortController();
    const onHardStop = () => {
      abandon.abort();
    };
    hardStop.signal.addEventListener("abort", onHardStop, { once: true });
    const wake = new Wakeup();
    const offRelease = slots.onRelease(wake.notify);
    const scheduler = new PartitionScheduler<Work, Done>(options.maxInFlightPerPartition);
    // Set from callbacks; read through a function so the loop sees updates.
    const box: { failure: Error | null } = { failure: null };
    const failed = () => box.failure;
    let committingHere = false;
    let commitFailures = 0;
    let lastHeartbeat = Date.now();
    const log = logger.child({ topic: batch.topic, partition: batch.partition });
    const fetchedAt = Date.now();
    const phases = new Map<string, EventPhases>();
    try {
      for (const message of batch.messages) {
        phases.set(message.offset, new EventPhases(Number(message.timestamp), fetchedAt));
        const { key, work } = await prepare(batch.topic, batch.partition, message);
        scheduler.add(message.offset, key, work);
      }
      for (;;) {
        const failure = failed();
        if (failure) throw failure;
        if (abandon.signal.aborted || !payload.isRunning() || payload.isStale()) {
          log.info(
            { pending: scheduler.pending },
            "batch abandoned; uncommitted offsets will be redelivered",
          );
          return;
        }
        // Pick the event before taking a slot: taking one and giving it back when every ready event
        // waits behind the signature gate would notify every batch, each of which would do the same
        // at once — a busy loop at 100% CPU for as long as a new signature's first event runs.
        while (!draining && !outage.closed && scheduler.hasRunnable() && slots.inUse < slots.size) {
          const runnable = scheduler.next(canStart);
          if (!runnable) break;
          // Cannot fail: there was a free slot and nothing has run since.
          if (!slots.tryAcquire()) throw new Error("slot pool invariant broken");
          const signature = runnable.item.signature;
          if (signature !== null) signatures.started(signature);
          metrics.inFlight.inc();
          const signal = abandon.signal;
          const phase = phases.get(runnable.offset);
          phase?.started(Date.now());
          runner
            .run(runnable.item, signal)
            .then(
              (done) => {
                phase?.finished(Date.now());
                if (!signal.aborted) scheduler.complete(runnable.offset, done);
              },
              (err: unknown) => {
                if (!(err instanceof Abandoned) && !signal.aborted) box.failure = asError(err);
              },
            )
            .finally(() => {
              if (signature !== null) signatures.finished(signature);
              metrics.inFlight.dec();
              slots.release();
              wake.notify();
            });
        }
        const prefix = committingHere ? null : scheduler.committable();
        if (prefix && !isAborted(abandon.signal)) {
          committingHere = true;
          const commitStartedAt = Date.now();
          const last = prefix.entries.at(-1)?.offset ?? "";
          committer
            .commit(
              batch.topic,
              batch.partition,
              prefix.nextOffset,
              prefix.entries.flatMap((e) => e.result.messages),
            )
            .then(
              () => {
                if (abandon.signal.aborted) return;
                scheduler.markCommitted(prefix.entries.length);
                payload.resolveOffset(last);
                commitFailures = 0;
                const committedAt = Date.now();
                for (const entry of prefix.entries) {
                  entry.result.afterCommit();
                  phases
                    .get(entry.offset)
                    ?.committed(consumerMetrics.eventPhases, commitStartedAt, committedAt);
                  phases.delete(entry.offset);
                }
              },
              (err: unknown) => {
                commitFailures += 1;
                if (isFenced(err) || commitFailures >= 20) box.failure = asError(err);
                else log.warn({ err, commitFailures }, "commit transaction failed; will retry");
              },
            )
            .finally(() => {
              committingHere = false;
              wake.notify();
            });
        }
        if (scheduler.pending === 0) return;
        if (draining && scheduler.inFlight === 0 && !committingHere && scheduler.committable() === null)
          return;
        await wake.wait(outage.closed ? 200 : 1000);
        if (Date.now() - lastHeartbeat >= 1000) {
          lastHeartbeat = Date.now();
          try {
            await payload.heartbeat();
          } catch (err) {
            // A rebalance: this partition may be someone else's now. Abandon; commit nothing more.
            log.info({ err: errorMessage(err) }, "heartbeat failed (rebalance?)");
            abandon.abort();
          }
        }
      }
    } finally {
      abandon.abort();
      offRelease();
      hardStop.signal.removeEventListener("abort", onHardStop);
      activeBatches -= 1;
      batchesDone.notify();
    }
  }

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
      current.on(current.events.GROUP_JOIN, (event) => {
        const assignment = event.payload.memberAssignment;
        const partitions = Object.values(assignment).reduce((n, list) => n + list.length, 0);
        rejoined(partitions);
        logger.info({ assignment }, "joined the consumer group");
      });
      current.on(current.events.REBALANCING, () => {
        leftGroup("rebalancing");
      });
      current.on(current.events.STOP, () => {
        leftGroup("stopped");
      });
      current.on(current.events.CRASH, (event) => {
        crashed(event.payload.error);
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
        eachBatch,
      });
    },

    /** The input topics subscribed to (the retry topic aside). */
    inputTopics: (): readonly string[] => inputs,

    isReady: () => joined && !draining && crashError === null,

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
      crashListeners.push(listener);
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
      joined = false;
      if (outOfGroupTimer) clearTimeout(outOfGroupTimer);
      metrics.ready.set(0);
      try {
        current.pause(topics());
      } catch {
        // not running (crashed): nothing to pause
      }
      const until = Date.now() + deadlineMs;
      while (activeBatches > 0 && Date.now() < until && crashError === null) {
        await batchesDone.wait(Math.min(200, Math.max(1, until - Date.now())));
      }
      hardStop.abort();
      consumer = null;
      await current.disconnect();
    },
  };
}

export type TaskConsumer = ReturnType<typeof createTaskConsumer>;
