import { errorMessage, type Failure } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import { maxBackoffMs, nextStep, type FailureStep } from "./failure-policy.js";
import { headerString } from "./cloud-events.js";
import type { CrashCounting } from "./crash-counting.js";
import type { DeadLetters } from "./dead-letters.js";
import { isRetryRound, retryNotBeforeHeader } from "./failure-records.js";
import type { OutageGate } from "./outage-gate.js";
import { classify } from "./transport-errors.js";
import { Abandoned, isAborted, sleep } from "./wakeup.js";
import type { Done, Work } from "./work.js";

export interface RetryLoopOptions {
  retryTopic: string;
  retryTopicDelayMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  outage: OutageGate;
  metrics: Metrics;
  deadLetters: DeadLetters;
  crashCounting: CrashCounting;
}

/** Failed attempts by kind: outage retries and holds do not spend the event's own attempts. */
class AttemptCounts {
  attempts = 0;
  outages = 0;
  holds = 0;

  /** Counts one failed attempt and returns the count of its kind. */
  count(failure: Failure): number {
    if (failure.kind === "outage") return (this.outages += 1);
    if (failure.kind === "hold") return (this.holds += 1);
    return (this.attempts += 1);
  }
}

/**
 * Runs an attempt until it ends in what the record commits: its result, a dead letter or a copy
 * on the retry topic. Each failure is classified once and `nextStep` says what follows: back-off,
 * a hold (the tenant's budget), a pause (an outage: the gate stops fetching), or an end. A record
 * from the retry topic waits first until its not-before time. Throws for a crash (the record's
 * crash count aside) and `Abandoned` when the signal gives the batch up.
 */
export function createRetryLoop(options: RetryLoopOptions) {
  const { outage, metrics, deadLetters, crashCounting } = options;
  const policy = { maxAttempts: options.maxAttempts, baseMs: options.retryBaseMs, maxMs: maxBackoffMs };

  /** What a failed attempt ends in; null when the attempt is to be made again (after a wait). */
  async function afterFailure(
    work: Work,
    err: unknown,
    counts: AttemptCounts,
    signal: AbortSignal,
    log: Logger,
  ): Promise<Done | null> {
    // Classified once: the Kafka edge names what no adapter did, then the one classifier.
    const failure = classify(err);
    const counted = counts.count(failure);
    // A record deferred for its tenant's share has not failed yet: its failures get a retry round.
    const lastRound = isRetryRound(work, options.retryTopic);
    const step: FailureStep = nextStep(failure, counted, lastRound, policy);
    switch (step.step) {
      case "crash":
        return crashCounting.crashOrDeadLetter(work, err, failure, log);
      case "dead-letter": {
        const reason =
          step.code === failure.code ? errorMessage(err) : `${failure.code}: ${errorMessage(err)}`;
        return deadLetters.deadLetter(work, step.code, reason, log);
      }
      case "retry-topic":
        return deadLetters.toRetryTopic(work, step.code, errorMessage(err), log);
      case "backoff":
        metrics.retries.inc({ code: step.code });
        log.warn({ err, attempt: counts.attempts, delayMs: step.delayMs }, "processing failed; retrying");
        break;
      case "hold":
        // The tenant is over its LLM budget: this event waits, the others go on (no outage).
        metrics.retries.inc({ code: step.code });
        log.info(
          { holdAttempt: counts.holds, delayMs: step.delayMs, reason: errorMessage(err) },
          "holding the event",
        );
        break;
      case "pause":
        metrics.retries.inc({ code: step.code });
        outage.enter(step.code);
        log.warn(
          { err, outageAttempt: counts.outages, delayMs: step.delayMs },
          "dependency unavailable; holding the event",
        );
        break;
    }
    await sleep(step.delayMs, signal);
    return null;
  }

  return async function untilSettled(
    work: Work,
    attempt: () => Promise<Done>,
    signal: AbortSignal,
    log: Logger,
  ): Promise<Done> {
    if (work.topic === options.retryTopic) {
      const notBefore = Number(headerString(work.message.headers, retryNotBeforeHeader) ?? "0");
      const wait = notBefore - Date.now();
      if (wait > 0) await sleep(Math.min(wait, options.retryTopicDelayMs), signal);
    }
    const counts = new AttemptCounts();
    for (;;) {
      if (signal.aborted) throw new Abandoned("abandoned");
      try {
        return await attempt();
      } catch (err) {
        if (err instanceof Abandoned || isAborted(signal)) throw new Abandoned("abandoned");
        const settled = await afterFailure(work, err, counts, signal, log);
        if (settled) return settled;
      }
    }
  };
}
