import type { Batch, EachBatchPayload } from "kafkajs";
import { errorMessage } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import { PartitionScheduler, SlotPool } from "./ordered-scheduler.js";
import type { EventRunner } from "./event-runner.js";
import { EventPhases } from "./event-phases.js";
import type { OutageGate } from "./outage-gate.js";
import { createPartitionCommit } from "./partition-commit.js";
import { RunningEvents } from "./running-events.js";
import { SignatureGate } from "./signature-gate.js";
import { DeferredFamilies, TenantShare } from "./tenant-share.js";
import { deferOverShare, handOverSlow, tenantOf } from "./tenant-deferral.js";
import { positionFetch, prepare } from "./partition-fetch.js";
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
   * How long a batch is pumped before it ends, its running events carried over to the partition's
   * next batch: kafkajs fetches the next batches only once every batch of a fetch has ended, so no
   * batch may wait long for its slowest event. Default 1 s.
   */
  roundMs?: number;
  /**
   * How long an event of a tenant being deferred (see `maxInFlightPerTenant`) may run on an input
   * topic before it too is handed to the retry topic, so that it holds the commits of the events
   * after it in its partition no longer than this. Default 2 s; 0 never hands a running event over.
   */
  handOverAfterMs?: number;
  /**
   * Uncommitted records a partition holds at most (running, done or waiting); kafkajs' fetch
   * position is kept after the last one held, so a slow event does not stop its partition's
   * later records from being fetched, and fetches do not bring again what is held. Default 1,000.
   */
  maxHeldPerPartition?: number;
  /**
   * The bytes of the records' values a partition holds uncommitted at most (it always holds one),
   * so that large records do not make the window large. Default 4 MiB.
   */
  maxHeldBytesPerPartition?: number;
  /** Stopping: start nothing new, finish and commit what runs. */
  isDraining: () => boolean;
}

/**
 * One partition's events from fetch to commit. It outlives the batch that fetched them: a batch
 * ends after its round, and events still running go on and are committed by a later batch of the
 * partition (or by the drain), so a slow event never holds the next fetch of every partition.
 */
interface PartitionRun {
  topic: string;
  partition: number;
  scheduler: PartitionScheduler<Work, Done>;
  /** Aborted when the partition's work is given up: nothing more of it is committed. */
  abandon: AbortController;
  wake: Wakeup;
  phases: Map<string, EventPhases>;
  /** Set from callbacks; read through a function so the loop sees updates. */
  box: { failure: Error | null };
  log: Logger;
  /** The offset after the last one added (what the next new record's offset is at least). */
  nextToAdd: bigint;
  /** The first offset not committed (null before the first record is added). */
  committedTo: bigint | null;
  /** The bytes of the values of the records held uncommitted. */
  heldBytes: number;
  /** Where kafkajs was last told to fetch from (`positionFetch`; 0 until then). */
  fetchFrom: bigint;
  commit: ReturnType<typeof createPartitionCommit>;
  running: RunningEvents;
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
  handOverAfterMs: number;
  maxHeldPerPartition: number;
  maxHeldBytes: number;
  /** Notified whenever an event or a commit ends anywhere (the drain waits on it). */
  changed: Wakeup;
}

/** Starts the partition's runnable events while slots (and their tenants' shares) allow. */
function launchRunnable(run: PartitionRun, shared: Shared): void {
  const { runner, outage, metrics, slots, signatures, tenants } = shared;
  const { scheduler, abandon, wake, phases, box } = run;
  const canStart = (work: Work): boolean =>
    !tenants.atShare(tenantOf(work)) && (work.signature === null || signatures.canStart(work.signature));
  const open = () => !shared.isDraining() && !outage.closed && !abandon.signal.aborted;
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
    // Aborted when the partition is given up, or when this event is handed over (handOverSlow).
    const { signal } = run.running.start(
      runnable.offset,
      runnable.item,
      runnable.key,
      Date.now(),
      abandon.signal,
    );
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
        run.running.end(runnable.offset);
        if (signature !== null) signatures.finished(signature);
        tenants.finished(tenant);
        metrics.inFlight.dec();
        slots.release();
        wake.notify();
        shared.changed.notify();
      });
    // This start may have brought its tenant to its share: the tenant's other ready events go.
    deferOverShare(run, shared);
  }
}

/**
 * Adds the batch's records the partition does not hold yet, while it holds fewer than its window
 * of uncommitted records (`maxHeldPerPartition`, `maxHeldBytesPerPartition`); the rest are
 * fetched again later.
 */
async function addNew(batch: Batch, run: PartitionRun, shared: Shared): Promise<void> {
  const fetchedAt = Date.now();
  for (const message of batch.messages) {
    const offset = BigInt(message.offset);
    if (offset < run.nextToAdd) continue;
    const { pending } = run.scheduler;
    if (pending >= shared.maxHeldPerPartition || (pending > 0 && run.heldBytes >= shared.maxHeldBytes)) break;
    run.committedTo ??= offset;
    run.heldBytes += message.value?.length ?? 0;
    run.phases.set(message.offset, new EventPhases(Number(message.timestamp), fetchedAt));
    const { key, work } = await prepare(shared.runner, batch.topic, batch.partition, message);
    run.scheduler.add(message.offset, key, work);
    run.nextToAdd = offset + 1n;
  }
}

/**
 * Runs and commits the partition's events for one round: until all are committed, the round is
 * over (events still running go on, for a later batch to commit), or the partition is given up or
 * fails.
 */
async function pump(payload: EachBatchPayload, run: PartitionRun, shared: Shared): Promise<void> {
  const { scheduler, abandon, wake, box, log, commit } = run;
  const failed = () => box.failure;
  const openedAt = Date.now();
  let lastHeartbeat = openedAt;
  for (;;) {
    const failure = failed();
    if (failure) throw failure;
    if (abandon.signal.aborted || !payload.isRunning() || payload.isStale()) {
      log.info(
        { pending: scheduler.pending },
        "partition abandoned; uncommitted offsets will be redelivered",
      );
      abandon.abort();
      return;
    }
    const handOverIn = handOverSlow(run, shared);
    launchRunnable(run, shared);
    commit.commitReady();
    if (scheduler.pending === 0 || shared.isDraining()) return;
    const left = shared.roundMs - (Date.now() - openedAt);
    // The next fetch of every partition waits for this batch: a round ends, whatever still runs.
    if (left <= 0) return;
    await wake.wait(Math.max(1, Math.min(left, shared.outage.closed ? 200 : 1000, handOverIn)));
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

/** A partition's run, new: from the batch's first offset. */
function newPartitionRun(
  shared: Shared,
  topic: string,
  partition: number,
  hardStop: AbortSignal,
): PartitionRun {
  const abandon = new AbortController();
  hardStop.addEventListener(
    "abort",
    () => {
      abandon.abort();
    },
    { once: true, signal: abandon.signal },
  );
  const wake = new Wakeup();
  const scheduler = new PartitionScheduler<Work, Done>(shared.maxInFlightPerPartition);
  const phases = new Map<string, EventPhases>();
  const box: { failure: Error | null } = { failure: null };
  const log = shared.logger.child({ topic, partition });
  const run: PartitionRun = {
    topic,
    partition,
    scheduler,
    abandon,
    wake,
    phases,
    box,
    log,
    nextToAdd: 0n,
    committedTo: null,
    heldBytes: 0,
    fetchFrom: 0n,
    commit: createPartitionCommit({
      committer: shared.committer,
      topic,
      partition,
      scheduler,
      phases,
      committed: (offset, bytes) => {
        run.committedTo = BigInt(offset) + 1n;
        run.heldBytes -= bytes;
      },
      signal: abandon.signal,
      consumerMetrics: shared.consumerMetrics,
      log,
      fail: (error) => (box.failure = error),
      notify: () => {
        wake.notify();
        shared.changed.notify();
      },
    }),
    running: new RunningEvents(),
  };
  return run;
}

/**
 * Pumps each fetched batch through the event runner: many events in flight per partition (a
 * slot pool shared by all partitions, a single flight per new signature, each tenant's share),
 * events of one loop family strictly in order, and each partition's contiguous completed prefix
 * committed (`partition-commit.ts`). A batch is pumped for one round: events still running then
 * are carried over to the partition's next batch (fetched from the last record the partition
 * holds, `positionFetch`), so no event holds the fetch of the others nor of its partition's later
 * records. A deferred tenant's events that run too long on an input topic are handed over
 * (`handOverSlow`). A partition is given up on a rebalance or a stop past its deadline (the
 * uncommitted rest is redelivered), or fails.
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
    handOverAfterMs: options.handOverAfterMs ?? 2000,
    maxHeldPerPartition: options.maxHeldPerPartition ?? 1000,
    maxHeldBytes: options.maxHeldBytesPerPartition ?? 4 * 1024 * 1024,
    changed: new Wakeup(),
  };
  const { slots } = shared;
  /** Aborted when shutdown gives up on in-flight work. */
  const hardStop = new AbortController();
  const partitions = new Map<string, PartitionRun>();
  let activeBatches = 0;

  /**
   * The partition's run, or a new one when it has none or was given up or moved on without us;
   * null when the batch is not to be taken (see below).
   */
  function runOf(batch: Batch, payload: EachBatchPayload): PartitionRun | null {
    const id = `${batch.topic}\u0000${String(batch.partition)}`;
    const held = partitions.get(id);
    // Where kafkajs fetched from (a commit marker's offset is not the first record's).
    const fetched = BigInt(
      (batch as Batch & { fetchedOffset?: string }).fetchedOffset ?? batch.messages[0]?.offset ?? "0",
    );
    if (held && !held.abandon.signal.aborted) {
      // Unless the fetch skipped records we hold uncommitted: another member committed past them.
      if (!(held.scheduler.pending > 0 && fetched > held.nextToAdd)) return held;
    } else if (held?.committedTo != null && fetched > held.committedTo) {
      // Given up here without a rebalance (which forgets every run and the fetch positions): the
      // fetch position is past records never committed. They are fetched again, this batch not taken.
      partitions.delete(id);
      payload.resolveOffset((held.committedTo - 1n).toString());
      return null;
    }
    held?.abandon.abort();
    const run = newPartitionRun(shared, batch.topic, batch.partition, hardStop.signal);
    partitions.set(id, run);
    return run;
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (batch.messages.length === 0) return;
    const run = runOf(batch, payload);
    if (!run) return;
    activeBatches += 1;
    const offRelease = slots.onRelease(run.wake.notify);
    try {
      await addNew(batch, run, shared);
      await pump(payload, run, shared);
      if (!run.abandon.signal.aborted) positionFetch(run, payload);
    } catch (err) {
      run.abandon.abort();
      throw err;
    } finally {
      offRelease();
      activeBatches -= 1;
      shared.changed.notify();
    }
  }

  /** Something is still to commit: running, committing, or done and not yet committed. */
  const unsettled = (run: PartitionRun) =>
    !run.abandon.signal.aborted &&
    (run.scheduler.inFlight > 0 || run.commit.busy() || run.scheduler.committable() !== null);

  return {
    eachBatch,
    /** Gives up every partition's work (a rebalance: kafkajs fetches again from the committed offsets). */
    reset(): void {
      for (const run of partitions.values()) run.abandon.abort();
      partitions.clear();
    },
    /**
     * Waits for the running batches and events to end and be committed until `deadlineMs` passes
     * or `givesUp()`, then abandons what still runs (uncommitted: the next owner redoes it).
     */
    async drain(deadlineMs: number, givesUp: () => boolean): Promise<void> {
      const until = Date.now() + deadlineMs;
      while (Date.now() < until && !givesUp()) {
        const runs = [...partitions.values()];
        if (activeBatches === 0) for (const run of runs) run.commit.commitReady();
        if (activeBatches === 0 && !runs.some(unsettled)) break;
        await shared.changed.wait(Math.min(200, Math.max(1, until - Date.now())));
      }
      hardStop.abort();
    },
  };
}

export type BatchPump = ReturnType<typeof createBatchPump>;
