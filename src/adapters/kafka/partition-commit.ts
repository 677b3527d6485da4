import type { Logger } from "../../observability/logger.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import type { PartitionScheduler } from "./ordered-scheduler.js";
import type { EventPhases } from "./event-phases.js";
import { isFenced, type TransactionalCommitter } from "./transactional-committer.js";
import { isAborted } from "./wakeup.js";
import type { Done, Work } from "./work.js";

/** Failed commit transactions in a row after which the batch gives up (the process restarts). */
const maxCommitFailures = 20;

export interface PartitionCommitOptions {
  committer: TransactionalCommitter;
  topic: string;
  partition: number;
  scheduler: PartitionScheduler<Work, Done>;
  /** Each event's phases by offset, observed once the event is committed. */
  phases: Map<string, EventPhases>;
  /** Told the last offset of each prefix once it is committed, and the bytes of its records' values. */
  committed: (offset: string, bytes: number) => void;
  /** The batch given up: a commit still under way changes nothing once it returns. */
  signal: AbortSignal;
  consumerMetrics: ConsumerMetrics;
  log: Logger;
  /** A commit that must not be retried (fenced, or failed too often): the batch fails with it. */
  fail: (error: Error) => void;
  /** Called when a commit ends, so that the batch looks again. */
  notify: () => void;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * One partition's commits: the highest contiguous prefix of completed events, their outputs and
 * the offset after them in one Kafka transaction, one transaction at a time. A failed commit is
 * retried with the next look (the prefix is still there), unless the producer was fenced.
 */
export function createPartitionCommit(options: PartitionCommitOptions) {
  const { committer, scheduler, phases, signal, consumerMetrics, log } = options;
  let committing = false;
  let failures = 0;

  function commitReady(): void {
    const prefix = committing ? null : scheduler.committable();
    if (!prefix || isAborted(signal)) return;
    committing = true;
    const commitStartedAt = Date.now();
    const last = prefix.entries.at(-1)?.offset ?? "";
    committer
      .commit(
        options.topic,
        options.partition,
        prefix.nextOffset,
        prefix.entries.flatMap((e) => e.result.messages),
      )
      .then(
        () => {
          if (signal.aborted) return;
          scheduler.markCommitted(prefix.entries.length);
          options.committed(
            last,
            prefix.entries.reduce((n, e) => n + (e.item.message.value?.length ?? 0), 0),
          );
          failures = 0;
          const committedAt = Date.now();
          for (const entry of prefix.entries) {
            entry.result.afterCommit();
            phases.get(entry.offset)?.committed(consumerMetrics.eventPhases, commitStartedAt, committedAt);
            phases.delete(entry.offset);
          }
        },
        (err: unknown) => {
          failures += 1;
          if (isFenced(err) || failures >= maxCommitFailures) options.fail(asError(err));
          else log.warn({ err, commitFailures: failures }, "commit transaction failed; will retry");
        },
      )
      .finally(() => {
        committing = false;
        options.notify();
      });
  }

  return {
    /** Starts the commit of what is committable now, unless a commit is under way. */
    commitReady,
    /** A commit is under way. */
    busy: () => committing,
  };
}
