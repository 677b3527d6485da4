import type { TopicMessages } from "kafkajs";
import { parseTaskCompleted, type TaskCompleted } from "../../domain/contracts/index.js";
import { ReflectorError } from "../../domain/errors.js";
import { bindingViolation, type TenantTopicBinding } from "../../domain/tenant-topic-binding.js";
import type { Logger } from "../../observability/logger.js";
import { countCommittedOutputs, type Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import type { CrashCounter, ValueCodec } from "../../pipeline/ports.js";
import type { EventFacts } from "../../pipeline/processing-state.js";
import type { TaskProcessor } from "../../pipeline/task-processor.js";
import { createCrashCounting } from "./crash-counting.js";
import { createDeadLetters } from "./dead-letters.js";
import { originOf, placeOf, type SourceRecord } from "./failure-records.js";
import type { OutageGate } from "./outage-gate.js";
import type { OutputPublisher } from "./output-publisher.js";
import { fitsAlone, recordBytes, type SizeLimits } from "./record-size.js";
import { createRetryLoop } from "./retry-loop.js";
import { Abandoned } from "./wakeup.js";
import type { Done, Work } from "./work.js";

export type { Done, Work } from "./work.js";

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

/** The first output that its topic would refuse, as a reason; null when all fit. */
function oversizedOutput(messages: TopicMessages[], limits: SizeLimits): string | null {
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
 * Runs one consumed message to what it commits: its outputs, or a dead letter, or a hand-over to
 * the retry topic. Retries in process with back-off, holds the event while a dependency is down
 * (`retry-loop.ts`), counts crashes (`crash-counting.ts`), and throws only for a crash (or
 * `Abandoned` when the batch is given up).
 */
export function createEventRunner(options: EventRunnerOptions) {
  const { codec, processor, publisher, limits, outage, logger, metrics } = options;
  const deadLetters = createDeadLetters(options);
  const crashCounting = createCrashCounting({ ...options, deadLetters });
  const untilSettled = createRetryLoop({ ...options, deadLetters, crashCounting });

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

  /**
   * The record as the processor knows it (whether an event id already committed publishes again):
   * a record from the retry topic is the one it was first read as, for its first run may have
   * stored the event and never published (a run handed over for its tenant's share, a lost commit).
   */
  function sourceOf(work: Work): string {
    const place = placeOf(work, { retryTopic: options.retryTopic });
    return `${place.topic}/${place.partition}/${place.offset}`;
  }

  /** One attempt: decode, process, encode the outputs; throws what the retry loop classifies. */
  async function attempt(work: Work, log: Logger): Promise<Done> {
    const facts = await prepare(work);
    const event = facts.event;
    const result = await processor.process(event, sourceOf(work), facts);
    const messages = await publisher.encode(result.outputs, work.message.headers);
    outage.leave();
    const oversized = oversizedOutput(messages, limits);
    if (oversized) return deadLetters.deadLetter(work, "OUTPUT_TOO_LARGE", oversized, log);
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
  }

  /** The delivery is counted before processing and forgotten once its outcome is committed. */
  async function run(work: Work, signal: AbortSignal): Promise<Done> {
    const log = logger.child({ topic: work.topic, partition: work.partition, offset: work.message.offset });
    const { crashLoop, finish } = await crashCounting.begin(work, log);
    let done: Done;
    if (crashLoop) {
      done = crashLoop;
    } else {
      try {
        done = await untilSettled(work, () => attempt(work, log), signal, log);
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

  return { run, decode, prepare, defer: deadLetters.defer };
}

export type EventRunner = ReturnType<typeof createEventRunner>;
