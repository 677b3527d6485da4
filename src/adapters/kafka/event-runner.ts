import type { Message, TopicMessages } from "kafkajs";
import { parseTaskCompleted, type TaskCompleted } from "../../domain/contracts/index.js";
import { errorMessage, failureOf, ReflectorError, type Failure } from "../../domain/errors.js";
import { bindingViolation, type TenantTopicBinding } from "../../domain/tenant-topic-binding.js";
import type { Logger } from "../../observability/logger.js";
import { countCommittedOutputs, type Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import { maxBackoffMs, nextStep, type FailureCode } from "../../pipeline/failure-policy.js";
import type { CrashCounter, ValueCodec } from "../../pipeline/ports.js";
import type { EventFacts } from "../../pipeline/processing-state.js";
import type { TaskProcessor } from "../../pipeline/task-processor.js";
import { headerString } from "./cloud-events.js";
import {
  deadLetterMessage,
  originOf,
  retryMessage,
  retryNotBeforeHeader,
  type SourceRecord,
} from "./failure-records.js";
import type { OutageGate } from "./outage-gate.js";
import type { OutputPublisher } from "./output-publisher.js";
import { fitsAlone, recordBytes, type SizeLimits } from "./record-size.js";
import { transportFailure } from "./transport-errors.js";
import { Abandoned, isAborted, sleep } from "./wakeup.js";

/** One consumed message as the scheduler holds it. */
export interface Work extends SourceRecord {
  /** Decoded up front to learn the ordering key; null when decoding must be (re)tried in the run. */
  event: TaskCompleted | null;
  /** What the processor derives from the event (`EventFacts`), once, when it is decoded. */
  facts?: EventFacts;
  /** Tenant + error signature, for the single-flight gate; null when unknown. */
  signature: string | null;
}

/** What a finished message contributes to the commit transaction. */
export interface Done {
  messages: TopicMessages[];
  afterCommit: () => void;
}

export interface EventRunnerOptions {
  groupId: string;
  retryTopic: string;
  deadLetterTopic: string;
  codec: ValueCodec;
  processor: TaskProcessor;
  publisher: OutputPublisher;
  limits: SizeLimits;
  outage: OutageGate;
  crashes?: CrashCounter;
  /** Crashes a record may cause before it is dead-lettered with CRASH_LOOP instead. */
  maxCrashesPerRecord: number;
  /**
   * Beyond this many distinct records crashing within the counter's window, the processor itself
   * is failing (a bug, a broken deploy): records are no longer dead-lettered for it.
   */
  maxCrashingRecords: number;
  logger: Logger;
  metrics: Metrics;
  consumerMetrics: ConsumerMetrics;
  maxAttempts: number;
  retryBaseMs: number;
  retryTopicDelayMs: number;
  /** `TENANT_TOPIC_BINDING`: an event's tenant must be its topic's (else TENANT_TOPIC_MISMATCH). */
  tenantBinding?: TenantTopicBinding;
}

/** The one classification of a failed attempt: `{action, code, kind}`. */
export function classify(err: unknown): Failure {
  return failureOf(transportFailure(err));
}

/** `topic/partition/offset`: the identity of one consumed record. */
export function recordRef(source: SourceRecord): string {
  return `${source.topic}/${String(source.partition)}/${source.message.offset}`;
}

/**
 * Runs one consumed message to what it commits: its outputs, or a dead letter, or a hand-over to
 * the retry topic. Retries in process with back-off, holds the event while a dependency is down,
 * and throws only for a crash (or `Abandoned` when the batch is given up).
 */
export function createEventRunner(options: EventRunnerOptions) {
  const { codec, processor, publisher, limits, outage, logger, metrics, consumerMetrics } = options;
  const policy = { maxAttempts: options.maxAttempts, baseMs: options.retryBaseMs, maxMs: maxBackoffMs };
  const fitsIn = (topic: string) => (message: Message) => fitsAlone(message, topic, limits);

  function deadLetter(work: Work, code: FailureCode, reason: string, log: Logger): Done {
    const message = deadLetterMessage(
      work,
      { groupId: options.groupId, code, reason, now: new Date(), retryTopic: options.retryTopic },
      fitsIn(options.deadLetterTopic),
    );
    return {
      messages: [{ topic: options.deadLetterTopic, messages: [message] }],
      afterCommit: () => {
        metrics.deadLetters.inc({ code });
        metrics.events.inc({ result: "dead_lettered" });
        log.warn({ code, reason, valueOmitted: message.value === null }, "event dead-lettered");
      },
    };
  }

  function toRetryTopic(work: Work, code: FailureCode, reason: string, log: Logger): Done {
    const message = retryMessage(
      work,
      { groupId: options.groupId, code, reason, now: new Date(), retryTopic: options.retryTopic },
      Date.now() + options.retryTopicDelayMs,
      fitsIn(options.retryTopic),
    );
    if (!message) {
      return deadLetter(work, code, `${reason} (too large for the retry topic, so not retried)`, log);
    }
    return {
      messages: [{ topic: options.retryTopic, messages: [message] }],
      afterCommit: () => {
        consumerMetrics.retryTopicMessages.inc();
        metrics.events.inc({ result: "retry_topic" });
        log.warn({ code, reason }, "event handed to the retry topic");
      },
    };
  }

  async function decode(work: SourceRecord & { event: TaskCompleted | null }): Promise<TaskCompleted> {
    if (work.event) return work.event;
    const value = work.message.value;
    if (!value || value.length === 0) throw new ReflectorError("DECODE_FAILED", "empty value (tombstone)");
    const event = parseTaskCompleted(await codec.decode(value));
    if (options.tenantBinding) {
      // The retry topic is Reflector's own: its records name the topic they were first read from.
      // Anywhere else the header is the producer's word and proves nothing.
      const topic = work.topic === options.retryTopic ? originOf(work).topic : work.topic;
      const violation = bindingViolation(options.tenantBinding, topic, event.tenantId);
      if (violation) throw new ReflectorError("TENANT_TOPIC_MISMATCH", violation);
    }
    return event;
  }

  /** The record's event with its facts, decoded and derived once and kept on the work item. */
  async function prepare(work: Work): Promise<EventFacts> {
    work.facts ??= processor.factsOf(await decode(work));
    return work.facts;
  }

  /** The first output that its topic would refuse, as a reason; null when all fit. */
  function oversizedOutput(messages: TopicMessages[]): string | null {
    for (const { topic, messages: list } of messages) {
      for (const message of list) {
        if (!fitsAlone(message, topic, limits)) {
          return `the ${topic} record would be ${String(recordBytes(message))} bytes, over the topic's limit of ${String(limits.topicBytes(topic))}`;
        }
      }
    }
    return null;
  }

  /**
   * Counts the delivery before processing and forgets it once its outcome is committed (or the
   * record is handed back on a rebalance or shutdown). A record whose earlier deliveries never
   * finished stalled or killed the process without throwing (the liveness probe, the memory limit):
   * after `maxCrashesPerRecord` such deliveries it is dead-lettered as CRASH_LOOP, unless many
   * records do so (then the processor is failing, not the record).
   */
  async function run(work: Work, signal: AbortSignal): Promise<Done> {
    const ref = recordRef(work);
    const log = logger.child({ topic: work.topic, partition: work.partition, offset: work.message.offset });
    const begun = await options.crashes?.begin?.(ref).catch((countErr: unknown) => {
      log.warn({ err: countErr }, "could not count the delivery");
      return null;
    });
    const finish = () =>
      void options.crashes?.finish?.(ref).catch((countErr: unknown) => {
        log.warn({ err: countErr }, "could not clear the delivery count");
      });
    let done: Done;
    if (
      begun &&
      begun.deliveries > options.maxCrashesPerRecord &&
      begun.crashingRecords <= options.maxCrashingRecords
    ) {
      done = deadLetter(
        work,
        "CRASH_LOOP",
        `delivered ${String(begun.deliveries)} times without finishing: it stalled or killed the processor`,
        log,
      );
    } else {
      try {
        done = await processOnce(work, signal, log);
      } catch (err) {
        if (err instanceof Abandoned) finish();
        throw err;
      }
    }
    return {
      messages: done.messages,
      afterCommit: () => {
        done.afterCommit();
        finish();
      },
    };
  }

  async function processOnce(work: Work, signal: AbortSignal, log: Logger): Promise<Done> {
    logger.child({ topic: work.topic, partition: work.partition, offset: work.message.offset });
    const fromRetryTopic = work.topic === options.retryTopic;
    if (fromRetryTopic) {
      const notBefore = Number(headerString(work.message.headers, retryNotBeforeHeader) ?? "0");
      const wait = notBefore - Date.now();
      if (wait > 0) await sleep(Math.min(wait, options.retryTopicDelayMs), signal);
    }
    let attempt = 0;
    let outageAttempt = 0;
    let holdAttempt = 0;
    for (;;) {
      if (signal.aborted) throw new Abandoned("abandoned");
      try {
        const facts = await prepare(work);
        const event = facts.event;
        const result = await processor.process(event, recordRef(work), facts);
        const messages = await publisher.encode(result.outputs, work.message.headers);
        outage.leave();
        const oversized = oversizedOutput(messages);
        if (oversized) return deadLetter(work, "OUTPUT_TOO_LARGE", oversized, log);
        return {
          messages,
          afterCommit: () => {
            metrics.events.inc({ result: result.status });
            countCommittedOutputs(metrics, result.outputs, result.generatorCalls);
            log.info(
              {
                tenantId: event.tenantId,
                loopId: event.loopId,
                eventId: event.eventId,
                status: result.status,
                verdict: result.verdict,
                decision: result.decision,
                outputs: result.outputs.length,
              },
              "event processed",
            );
          },
        };
      } catch (err) {
        if (err instanceof Abandoned || isAborted(signal)) throw new Abandoned("abandoned");
        // Classified once: the Kafka edge names what no adapter did, then the one classifier.
        const failure = classify(err);
        if (failure.kind === "outage") outageAttempt += 1;
        else if (failure.kind === "hold") holdAttempt += 1;
        else attempt += 1;
        const counted =
          failure.kind === "outage" ? outageAttempt : failure.kind === "hold" ? holdAttempt : attempt;
        const step = nextStep(failure, counted, fromRetryTopic, policy);
        switch (step.step) {
          case "crash":
            return crashOrDeadLetter(work, err, failure, log);
          case "dead-letter":
            return deadLetter(
              work,
              step.code,
              step.code === failure.code ? errorMessage(err) : `${failure.code}: ${errorMessage(err)}`,
              log,
            );
          case "retry-topic":
            return toRetryTopic(work, step.code, errorMessage(err), log);
          case "backoff":
            metrics.retries.inc({ code: step.code });
            log.warn({ err, attempt, delayMs: step.delayMs }, "processing failed; retrying");
            await sleep(step.delayMs, signal);
            break;
          case "hold":
            // The tenant is over its LLM budget: this event waits, the others go on (no outage).
            metrics.retries.inc({ code: step.code });
            log.info({ holdAttempt, delayMs: step.delayMs, reason: errorMessage(err) }, "holding the event");
            await sleep(step.delayMs, signal);
            break;
          case "pause":
            metrics.retries.inc({ code: step.code });
            outage.enter(step.code);
            log.warn(
              { err, outageAttempt, delayMs: step.delayMs },
              "dependency unavailable; holding the event",
            );
            await sleep(step.delayMs, signal);
            break;
        }
      }
    }
  }

  /**
   * A failure that is a bug crashes the process, so that it restarts from the committed offset.
   * The same record crashing it again and again would stop its partition for good: after
   * `maxCrashesPerRecord` crashes it is dead-lettered instead, with the error that kept happening.
   * Unless many records crash: then the processor is broken, not the record, and dead-lettering
   * would empty the topic into the DLQ; it keeps crashing so that someone looks.
   */
  async function crashOrDeadLetter(work: Work, err: unknown, failure: Failure, log: Logger): Promise<Done> {
    const counted = await options.crashes?.record(recordRef(work)).catch((countErr: unknown) => {
      log.warn({ err: countErr }, "could not count the crash");
      return null;
    });
    if (counted && counted.crashes >= options.maxCrashesPerRecord) {
      if (counted.crashingRecords <= options.maxCrashingRecords) {
        return deadLetter(
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

  return { run, decode, prepare };
}

export type EventRunner = ReturnType<typeof createEventRunner>;
