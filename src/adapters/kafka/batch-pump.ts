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
import { DeferredFamilies, TenantShare } from "./tenant-share.js";
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
  /**
   * Events one tenant may have in flight at once, all partitions together; 0 for no share. On an
   * input topic the ready events of a tenant at its share are handed to `retryTopic`, unprocessed.
   */
  maxInFlightPerTenant: number;
  retryTopic: string;
  /**
   * How long a batch in which a tenant waited for its share stays open before it starts nothing
   * more, commits what is done and ends (the rest is fetched again): the consumer fetches the next
   * batches only once every batch of a fetch has ended, so no batch may wait long. Default 1 s.
   */
  roundMs?: number;
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
  openedAt: number;
  /** An event of the batch waited for its tenant's share. */
  heldBack: boolean;
  /** The batch's round is over: start nothing more, commit what is done, end. */
  closing: boolean;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** What every batch of the pump shares: its options, the slots, the signature gate and the tenants' shares. */
interface Shared extends BatchPumpOptions {
  slots: SlotPool;
  signatures: SignatureGate;
  tenants: TenantShare;
  deferredFamilies: DeferredFamilies;
  roundMs: number;
}

const tenantOf = (work: Work): string | null => work.event?.tenantId ?? null;

/**
 * On an input topic, hands the ready events of tenants at their share to the retry topic (and
 * every later event of a loop family that went there, to keep the family in order): each is
 * settled at once, in its place in the partition's order, and commits with the prefix. Events too
 * large for the retry topic stay, to wait for their tenant's turn.
 */
function deferOverShare(run: BatchRun, shared: Shared): void {
  const { tenants, deferredFamilies, runner } = shared;
  if (tenants.limit === 0 || run.batch.topic === shared.retryTopic) return;
  run.scheduler.settle((work, key) => {
    const follows = key !== null && deferredFamilies.has(key);
    if (!follows && !tenants.atShare(tenantOf(work))) return undefined;
    const done = runner.defer(work);
    if (!done) return undefined;
    if (key !== null) deferredFamilies.add(key);
    return done;
  });
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
  const { runner, outage, metrics, slots, signatures, tenants } = shared;
  const { scheduler, abandon, wake, phases, box } = run;
  const canStart = (work: Work): boolean => {
    if (tenants.atShare(tenantOf(work))) {
      run.heldBack = true;
      return false;
    }
    return work.signature === null || signatures.canStart(work.signature);
  };
  const open = () => !run.closing && !shared.isDraining() && !outage.closed;
  if (open()) deferOverShare(run, shared);
  // Pick the event before taking a slot: taking one and giving it back when every ready event
  // waits behind the signature gate would notify every batch, each of which would do the same
  // at once — a busy loop at 100% CPU for as long as a new signature's first event runs.
  while (open() && scheduler.hasRunnable() && slots.inUse < slots.size) {
    const runnable = scheduler.next(canStart);
    if (!runnable) break;
    // Cannot fail: there was a free slot and nothing has run since.
    if (!slots.tryAcquire()) throw new Error("slot pool invariant broken");
    const signature = runnable.item.signature;
    if (signature !== null) signatures.started(signature);
    const tenant = tenantOf(runnable.item);
    tenants.started(tenant);
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
        tenants.finished(tenant);
        metrics.inFlight.dec();
        slots.release();
        wake.notify();
      });
    // This start may have brought its tenant to its share: the tenant's other ready events go.
    deferOverShare(run, shared);
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
    if (run.heldBack && !run.closing && Date.now() - run.openedAt >= shared.roundMs) {
      // A tenant over its share must not hold the fetch of every partition: end this round.
      run.closing = true;
      continue;
    }
    if ((shared.isDraining() || run.closing) && scheduler.inFlight === 0 && !commit.busy() && scheduler.committable() === null)
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
    tenants: new TenantShare(options.maxInFlightPerTenant),
    deferredFamilies: new DeferredFamilies(100_000),
    roundMs: options.roundMs ?? 1000,
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
      openedAt: Date.now(),
      heldBack: false,
      closing: false,
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
