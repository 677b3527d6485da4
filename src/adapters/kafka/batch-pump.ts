import type { Batch, EachBatchPayload, KafkaMessage } from "kafkajs";
import { errorMessage } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import { loopFamilyKey, PartitionScheduler, SlotPool } from "./ordered-scheduler.js";
import type { EventRunner } from "./event-runner.js";
import { EventPhases } from "./event-phases.js";
import type { OutageGate } from "./outage-gate.js";
import { createPartitionCommit } from "./partition-commit.js";
import { SignatureGate } from "./signature-gate.js";
import type { TransactionalCommitter } from "./transactional-committer.js";
import { Abandoned, Wakeup } from "./wakeup.js";
import type { Done, Work } from "./work.js";

export interface BatchPumpOptions {
  committer: TransactionalCommitter;
  runner: EventRunner;
  outage: OutageGate;
  logger: Logger;
  metrics: Metrics;
  consumerMetrics: ConsumerMetrics;
  maxInFlight: number;
  maxInFlightPerPartition: number;
  /** Stopping: start nothing new, finish and commit what runs. */
  isDraining: () => boolean;
}

/** One batch (one partition's fetched records) while it is pumped. */
interface BatchRun {
  batch: Batch;
  scheduler: PartitionScheduler<Work, Done>;
  /** Aborted when the batch is given up: nothing more of it is committed. */
  abandon: AbortController;
  wake: Wakeup;
  phases: Map<string, EventPhases>;
  /** Set from callbacks; read through a function so the loop sees updates. */
  box: { failure: Error | null };
  log: Logger;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** What every batch of the pump shares: its options, the slots and the signature gate. */
interface Shared extends BatchPumpOptions {
  slots: SlotPool;
  signatures: SignatureGate;
}

/**
 * Decodes up front, with the event's facts (carried to the run), to find the ordering key (the
 * loop family) and the signature; failures are left to the run.
 */
async function prepare(
  runner: EventRunner,
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

/** Starts the batch's runnable events while slots are free. */
function launchRunnable(run: BatchRun, shared: Shared): void {
  const { runner, outage, metrics, slots, signatures } = shared;
  const { scheduler, abandon, wake, phases, box } = run;
  const canStart = (work: Work): boolean => work.signature === null || signatures.canStart(work.signature);
  // Pick the event before taking a slot: taking one and giving it back when every ready event
  // waits behind the signature gate would notify every batch, each of which would do the same
  // at once — a busy loop at 100% CPU for as long as a new signature's first event runs.
  while (!shared.isDraining() && !outage.closed && scheduler.hasRunnable() && slots.inUse < slots.size) {
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
}

/** Runs and commits the batch's events until all are committed, or it is given up or fails. */
async function pump(payload: EachBatchPayload, run: BatchRun, shared: Shared): Promise<void> {
  const { batch, scheduler, abandon, wake, phases, box, log } = run;
  const failed = () => box.failure;
  let lastHeartbeat = Date.now();
  const fetchedAt = Date.now();
  for (const message of batch.messages) {
    phases.set(message.offset, new EventPhases(Number(message.timestamp), fetchedAt));
    const { key, work } = await prepare(shared.runner, batch.topic, batch.partition, message);
    scheduler.add(message.offset, key, work);
  }
  const commit = createPartitionCommit({
    committer: shared.committer,
    topic: batch.topic,
    partition: batch.partition,
    scheduler,
    phases,
    resolveOffset: (offset) => {
      payload.resolveOffset(offset);
    },
    signal: abandon.signal,
    consumerMetrics: shared.consumerMetrics,
    log,
    fail: (error) => (box.failure = error),
    notify: wake.notify,
  });
  for (;;) {
    const failure = failed();
    if (failure) throw failure;
    if (abandon.signal.aborted || !payload.isRunning() || payload.isStale()) {
      log.info({ pending: scheduler.pending }, "batch abandoned; uncommitted offsets will be redelivered");
      return;
    }
    launchRunnable(run, shared);
    commit.commitReady();
    if (scheduler.pending === 0) return;
    if (shared.isDraining() && scheduler.inFlight === 0 && !commit.busy() && scheduler.committable() === null)
      return;
    await wake.wait(shared.outage.closed ? 200 : 1000);
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
}

/**
 * Pumps each fetched batch through the event runner: many events in flight per partition (a
 * slot pool shared by all partitions, a single flight per new signature), events of one loop
 * family strictly in order, and each partition's contiguous completed prefix committed
 * (`partition-commit.ts`). A batch ends when all its events are committed, when it is given up (a
 * rebalance, a stop past its deadline: the uncommitted rest is redelivered) or when it fails.
 */
export function createBatchPump(options: BatchPumpOptions) {
  const shared: Shared = {
    ...options,
    slots: new SlotPool(options.maxInFlight),
    // Single flight per new signature (see SignatureGate).
    signatures: new SignatureGate(50_000),
  };
  const { slots } = shared;
  /** Aborted when shutdown gives up on in-flight work. */
  const hardStop = new AbortController();
  let activeBatches = 0;
  const batchesDone = new Wakeup();

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
    const run: BatchRun = {
      batch,
      scheduler: new PartitionScheduler<Work, Done>(options.maxInFlightPerPartition),
      abandon,
      wake,
      phases: new Map(),
      box: { failure: null },
      log: options.logger.child({ topic: batch.topic, partition: batch.partition }),
    };
    try {
      await pump(payload, run, shared);
    } finally {
      abandon.abort();
      offRelease();
      hardStop.signal.removeEventListener("abort", onHardStop);
      activeBatches -= 1;
      batchesDone.notify();
    }
  }

  return {
    eachBatch,
    /**
     * Waits for the running batches to end until `deadlineMs` passes or `givesUp()`, then
     * abandons what still runs (uncommitted: the next owner redoes it).
     */
    async drain(deadlineMs: number, givesUp: () => boolean): Promise<void> {
      const until = Date.now() + deadlineMs;
      while (activeBatches > 0 && Date.now() < until && !givesUp()) {
        await batchesDone.wait(Math.min(200, Math.max(1, until - Date.now())));
      }
      hardStop.abort();
    },
  };
}

export type BatchPump = ReturnType<typeof createBatchPump>;
