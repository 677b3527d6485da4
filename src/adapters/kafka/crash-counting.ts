import { errorMessage, type Failure } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import type { CrashCounter } from "../../pipeline/ports.js";
import type { DeadLetters } from "./dead-letters.js";
import { recordRef, type Done, type Work } from "./work.js";

export interface CrashCountingOptions {
  crashes?: CrashCounter;
  /** Crashes a record may cause before it is dead-lettered with CRASH_LOOP instead. */
  maxCrashesPerRecord: number;
  /**
   * Beyond this many distinct records crashing within the counter's window, the processor itself
   * is failing (a bug, a broken deploy): records are no longer dead-lettered for it.
   */
  maxCrashingRecords: number;
  deadLetters: DeadLetters;
}

/** A delivery as counted: a CRASH_LOOP dead letter in place of processing, or null; and its end. */
export interface CountedDelivery {
  crashLoop: Done | null;
  /** Forgets the delivery: its outcome is committed, or the record was handed back. */
  finish: () => void;
}

/**
 * The crash counts of records, kept by the `CrashCounter` port (Redis, across restarts). A count
 * that cannot be read or written is logged and ignored: the record is processed as if uncounted.
 */
export function createCrashCounting(options: CrashCountingOptions) {
  const { crashes, maxCrashesPerRecord, maxCrashingRecords, deadLetters } = options;

  /**
   * Counts the delivery before processing; `finish` forgets it. A record whose earlier deliveries
   * never finished stalled or killed the process without throwing (the liveness probe, the memory
   * limit): after `maxCrashesPerRecord` such deliveries it is dead-lettered as CRASH_LOOP, unless
   * many records do so (then the processor is failing, not the record).
   */
  async function begin(work: Work, log: Logger): Promise<CountedDelivery> {
    const ref = recordRef(work);
    const begun = await crashes?.begin?.(ref).catch((countErr: unknown) => {
      log.warn({ err: countErr }, "could not count the delivery");
      return null;
    });
    const finish = () =>
      void crashes?.finish?.(ref).catch((countErr: unknown) => {
        log.warn({ err: countErr }, "could not clear the delivery count");
      });
    const looping =
      begun && begun.deliveries > maxCrashesPerRecord && begun.crashingRecords <= maxCrashingRecords;
    const crashLoop = looping
      ? deadLetters.deadLetter(
          work,
          "CRASH_LOOP",
          `delivered ${String(begun.deliveries)} times without finishing: it stalled or killed the processor`,
          log,
        )
      : null;
    return { crashLoop, finish };
  }

  /**
   * A failure that is a bug crashes the process, so that it restarts from the committed offset.
   * The same record crashing it again and again would stop its partition for good: after
   * `maxCrashesPerRecord` crashes it is dead-lettered instead, with the error that kept happening.
   * Unless many records crash: then the processor is broken, not the record, and dead-lettering
   * would empty the topic into the DLQ; it keeps crashing so that someone looks.
   */
  async function crashOrDeadLetter(work: Work, err: unknown, failure: Failure, log: Logger): Promise<Done> {
    const counted = await crashes?.record(recordRef(work)).catch((countErr: unknown) => {
      log.warn({ err: countErr }, "could not count the crash");
      return null;
    });
    if (counted && counted.crashes >= maxCrashesPerRecord) {
      if (counted.crashingRecords <= maxCrashingRecords) {
        return deadLetters.deadLetter(
          work,
          "CRASH_LOOP",
          `crashed the processor ${String(counted.crashes)} times: ${failure.code}: ${errorMessage(err)}`,
          log,
        );
      }
      log.error(
        { crashingRecords: counted.crashingRecords, err },
        "many records crash the processor: it is failing, not the record; not dead-lettering",
      );
    }
    throw err;
  }

  return { begin, crashOrDeadLetter };
}

export type CrashCounting = ReturnType<typeof createCrashCounting>;
