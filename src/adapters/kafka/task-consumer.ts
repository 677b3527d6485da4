import type {
  Consumer,
  EachBatchPayload,
  IHeaders,
  Kafka,
  KafkaMessage,
  Producer,
  TopicMessages,
} from "kafkajs";
import { TaskCompletedV1, type TaskCompleted } from "../../domain/contracts/index.js";
import { signatureFor } from "../../domain/signature.js";
import { classifyFailure, errorMessage, isOutage, ReflectorError } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import { countCommittedOutputs, type Metrics } from "../../observability/metrics.js";
import type { ConsumerMetrics } from "../../observability/consumer-metrics.js";
import { codeOf, nextStep, type FailureCode } from "../../pipeline/failure-policy.js";
import { loopFamilyKey, PartitionScheduler, SlotPool } from "../../pipeline/ordered-scheduler.js";
import type { TaskProcessor } from "../../pipeline/task-processor.js";
import type { ValueCodec } from "../schema-registry/value-codec.js";
import type { OutputPublisher } from "./output-publisher.js";

export interface TaskConsumerOptions {
  kafka: Kafka;
  /** A transactional producer (`transactionalId` set); outputs and offsets go in one transaction. */
  producer: Producer;
  groupId: string;
  topic: string;
  retryTopic: string;
  deadLetterTopic: string;
  fromBeginning: boolean;
  codec: ValueCodec;
  processor: TaskProcessor;
  publisher: OutputPublisher;
  logger: Logger;
  metrics: Metrics;
  consumerMetrics: ConsumerMetrics;
  /** In-process attempts of a failure that belongs to the event before it goes to the retry topic. */
  maxAttempts: number;
  retryBaseMs: number;
  maxInFlight: number;
  maxInFlightPerPartition: number;
  retryTopicDelayMs: number;
  /** How long the group waits for a silent member (a killed process) before rebalancing. */
  sessionTimeoutMs?: number;
}

/** Zod issues as one readable line: `task.description: Too small; outcome: Invalid option`. */
function describeIssues(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
}

export function parseTaskCompleted(raw: unknown): TaskCompleted {
  if (typeof raw === "object" && raw !== null && "schemaVersion" in raw && raw.schemaVersion !== 1) {
    throw new ReflectorError(
      "UNSUPPORTED_SCHEMA_VERSION",
      `schemaVersion ${JSON.stringify(raw.schemaVersion)} is not supported (this build reads 1)`,
    );
  }
  const parsed = TaskCompletedV1.safeParse(raw);
  if (!parsed.success) throw new ReflectorError("SCHEMA_INVALID", describeIssues(parsed.error));
  return parsed.data;
}

const retryCountHeader = "reflector.retry.count";
const retryNotBeforeHeader = "reflector.retry.not-before";

function header(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

/** One consumed message as the scheduler holds it. */
interface Work {
  topic: string;
  partition: number;
  message: KafkaMessage;
  /** Decoded up front to learn the ordering key; null when decoding must be (re)tried in the task. */
  event: TaskCompleted | null;
  /** Tenant + error signature, for the single-flight gate; null when unknown. */
  signature: string | null;
}

/** What a finished message contributes to the commit transaction. */
interface Done {
  messages: TopicMessages[];
  afterCommit: () => void;
}

class Abandoned extends Error {
  override readonly name = "Abandoned";
}

/** Read through a call: an await may have aborted the signal since the last check. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Abandoned("abandoned"));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Abandoned("abandoned"));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves on `notify()` or after `ms`, whichever comes first. */
class Wakeup {
  private waiter: (() => void) | null = null;
  private pending = false;
  readonly notify = (): void => {
    this.pending = true;
    this.waiter?.();
  };
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiter = null;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiter = done;
    });
  }
}

/** Signatures running now, and an LRU of signatures this instance has finished at least once. */
class SignatureGate {
  private readonly running = new Map<string, number>();
  private readonly known = new Map<string, true>();
  constructor(private readonly capacity: number) {}
  canStart(signature: string): boolean {
    return this.known.has(signature) || !this.running.has(signature);
  }
  started(signature: string): void {
    this.running.set(signature, (this.running.get(signature) ?? 0) + 1);
  }
  finished(signature: string): void {
    const left = (this.running.get(signature) ?? 1) - 1;
    if (left > 0) this.running.set(signature, left);
    else this.running.delete(signature);
    this.known.delete(signature);
    this.known.set(signature, true);
    if (this.known.size > this.capacity) {
      const oldest = this.known.keys().next();
      if (!oldest.done) this.known.delete(oldest.value);
    }
  }
}

interface CommitRequest {
  topic: string;
  partition: number;
  nextOffset: string;
  messages: TopicMessages[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** kafkajs reports a newer producer with our transactional id this way: we are a zombie, stop. */
function isFenced(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return (
    type === "INVALID_PRODUCER_EPOCH" ||
    type === "PRODUCER_FENCED" ||
    type === "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
  );
}

/**
 * Reads `agent.task.completed` (and the retry topic) with many events in flight per partition,
 * events of one loop family strictly in order, and commits, per partition, the highest contiguous
 * completed offset together with those events' outputs in one Kafka transaction
 * (docs/delivery-guarantees.md).
 */
export function createTaskConsumer(options: TaskConsumerOptions) {
  const { kafka, producer, codec, processor, publisher, logger, metrics, consumerMetrics } = options;
  const policy = { maxAttempts: options.maxAttempts, baseMs: options.retryBaseMs, maxMs: 30_000 };
  const slots = new SlotPool(options.maxInFlight);
  let consumer: Consumer | null = null;
  let joined = false;
  let draining = false;
  /** Aborted when shutdown gives up on in-flight work. */
  const hardStop = new AbortController();
  let activeBatches = 0;
  const batchesDone = new Wakeup();
  let crashError: unknown = null;

  // ---- Single flight per new signature: while the first event of a signature not yet seen
  // by this instance is being reflected on, later events with that signature wait, so they find
  // the stored reflection instead of calling the LLM again. Once one finished, no more waiting.
  const signatures = new SignatureGate(50_000);
  const canStart = (work: Work): boolean => work.signature === null || signatures.canStart(work.signature);

  // ---- Outage gate: while a dependency is down, start nothing new and fetch nothing new. ----
  let outage: { code: FailureCode; since: number } | null = null;
  function enterOutage(code: FailureCode): void {
    if (outage) return;
    outage = { code, since: Date.now() };
    consumerMetrics.paused.set(1);
    logger.warn({ code }, "dependency outage: pausing consumption");
    consumer?.pause([{ topic: options.topic }, { topic: options.retryTopic }]);
  }
  function leaveOutage(): void {
    if (!outage) return;
    logger.info(
      { code: outage.code, pausedMs: Date.now() - outage.since },
      "dependency back: resuming consumption",
    );
    outage = null;
    consumerMetrics.paused.set(0);
    if (!draining) consumer?.resume([{ topic: options.topic }, { topic: options.retryTopic }]);
  }

  // ---- Committer: one transaction at a time; requests from every partition share it. ----
  const queue: CommitRequest[] = [];
  let committing = false;
  async function runTransaction(requests: CommitRequest[]): Promise<void> {
    const transaction = await producer.transaction();
    try {
      const byTopic = new Map<string, TopicMessages["messages"]>();
      for (const request of requests) {
        for (const { topic, messages } of request.messages) {
          byTopic.set(topic, [...(byTopic.get(topic) ?? []), ...messages]);
        }
      }
      if (byTopic.size > 0) {
        await transaction.sendBatch({
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        });
      }
      const offsets = new Map<string, { partition: number; offset: string }[]>();
      for (const request of requests) {
        offsets.set(request.topic, [
          ...(offsets.get(request.topic) ?? []),
          { partition: request.partition, offset: request.nextOffset },
        ]);
      }
      await transaction.sendOffsets({
        consumerGroupId: options.groupId,
        topics: [...offsets].map(([topic, partitions]) => ({ topic, partitions })),
      });
      await transaction.commit();
      consumerMetrics.transactions.inc({ result: "committed" });
    } catch (err) {
      consumerMetrics.transactions.inc({ result: "aborted" });
      await transaction.abort().catch((abortErr: unknown) => {
        logger.warn({ err: abortErr }, "transaction abort failed");
      });
      throw err;
    }
  }
  async function pumpCommits(): Promise<void> {
    if (committing) return;
    committing = true;
    try {
      while (queue.length > 0) {
        const requests = queue.splice(0, queue.length);
        try {
          await runTransaction(requests);
          for (const request of requests) request.resolve();
        } catch (err) {
          for (const request of requests) request.reject(err);
        }
      }
    } finally {
      committing = false;
    }
  }
  function commit(topic: string, partition: number, nextOffset: string, messages: TopicMessages[]) {
    return new Promise<void>((resolve, reject) => {
      queue.push({ topic, partition, nextOffset, messages, resolve, reject });
      void pumpCommits();
    });
  }

  // ---- What one message turns into. ----
  function failureHeaders(work: Work, code: FailureCode, reason: string): IHeaders {
    return {
      ...work.message.headers,
      "reflector.error.code": code,
      "reflector.error.message": reason.slice(0, 2000),
      "reflector.original.topic": header(work.message.headers, "reflector.original.topic") ?? work.topic,
      "reflector.original.partition":
        header(work.message.headers, "reflector.original.partition") ?? String(work.partition),
      "reflector.original.offset":
        header(work.message.headers, "reflector.original.offset") ?? work.message.offset,
      "reflector.consumer.group": options.groupId,
      "reflector.failed.at": new Date().toISOString(),
    };
  }

  function deadLetter(work: Work, code: FailureCode, reason: string, log: Logger): Done {
    return {
      messages: [
        {
          topic: options.deadLetterTopic,
          messages: [
            { key: work.message.key, value: work.message.value, headers: failureHeaders(work, code, reason) },
          ],
        },
      ],
      afterCommit: () => {
        metrics.deadLetters.inc({ code });
        metrics.events.inc({ result: "dead_lettered" });
        log.warn({ code, reason }, "event dead-lettered");
      },
    };
  }

  function toRetryTopic(work: Work, code: FailureCode, reason: string, log: Logger): Done {
    const headers: IHeaders = {
      ...failureHeaders(work, code, reason),
      [retryCountHeader]: "1",
      [retryNotBeforeHeader]: String(Date.now() + options.retryTopicDelayMs),
    };
    return {
      messages: [
        {
          topic: options.retryTopic,
          messages: [{ key: work.message.key, value: work.message.value, headers }],
        },
      ],
      afterCommit: () => {
        consumerMetrics.retryTopicMessages.inc();
        metrics.events.inc({ result: "retry_topic" });
        log.warn({ code, reason }, "event handed to the retry topic");
      },
    };
  }

  async function decode(work: Work): Promise<TaskCompleted> {
    if (work.event) return work.event;
    const value = work.message.value;
    if (!value || value.length === 0) throw new ReflectorError("DECODE_FAILED", "empty value (tombstone)");
    return parseTaskCompleted(await codec.decode(value));
  }

  async function handle(work: Work, signal: AbortSignal): Promise<Done> {
    const log = logger.child({ topic: work.topic, partition: work.partition, offset: work.message.offset });
    const fromRetryTopic = work.topic === options.retryTopic;
    if (fromRetryTopic) {
      const notBefore = Number(header(work.message.headers, retryNotBeforeHeader) ?? "0");
      const wait = notBefore - Date.now();
      if (wait > 0) await sleep(Math.min(wait, options.retryTopicDelayMs), signal);
    }
    let attempt = 0;
    let outageAttempt = 0;
    for (;;) {
      if (signal.aborted) throw new Abandoned("abandoned");
      try {
        const event = await decode(work);
        const result = await processor.process(event);
        const messages = await publisher.encode(result.outputs, work.message.headers);
        leaveOutage();
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
        const outageNow = classifyFailure(err) === "retry" && isOutage(err);
        if (outageNow) outageAttempt += 1;
        else attempt += 1;
        const step = nextStep(err, outageNow ? outageAttempt : attempt, fromRetryTopic, policy);
        switch (step.step) {
          case "crash":
            throw err;
          case "dead-letter":
            return deadLetter(
              work,
              step.code,
              step.code === "RETRIES_EXHAUSTED" ? `${codeOf(err)}: ${errorMessage(err)}` : errorMessage(err),
              log,
            );
          case "retry-topic":
            return toRetryTopic(work, step.code, errorMessage(err), log);
          case "backoff":
            metrics.retries.inc({ code: step.code });
            log.warn({ err, attempt, delayMs: step.delayMs }, "processing failed; retrying");
            await sleep(step.delayMs, signal);
            break;
          case "pause":
            metrics.retries.inc({ code: step.code });
            enterOutage(step.code);
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

  /** Decodes up front to find the ordering key (the loop family); failures are left to the task. */
  async function prepare(
    topic: string,
    partition: number,
    message: KafkaMessage,
  ): Promise<{ key: string | null; work: Work }> {
    const work: Work = { topic, partition, message, event: null, signature: null };
    try {
      work.event = await decode(work);
      work.signature = `${work.event.tenantId}\u0000${signatureFor(work.event)}`;
      return { key: loopFamilyKey(work.event), work };
    } catch {
      // Undecodable now: dead-lettered (no key needed) or retried in the task, ordered by the Kafka key.
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
    try {
      for (const message of batch.messages) {
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
        while (!draining && outage === null && scheduler.hasRunnable() && slots.inUse < slots.size) {
          const runnable = scheduler.next(canStart);
          if (!runnable) break;
          // Cannot fail: there was a free slot and nothing has run since.
          if (!slots.tryAcquire()) throw new Error("slot pool invariant broken");
          const signature = runnable.item.signature;
          if (signature !== null) signatures.started(signature);
          metrics.inFlight.inc();
          const signal = abandon.signal;
          handle(runnable.item, signal)
            .then(
              (done) => {
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
          const last = prefix.entries.at(-1)?.offset ?? "";
          commit(
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
                for (const entry of prefix.entries) entry.result.afterCommit();
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
        await wake.wait(outage ? 200 : 1000);
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

  return {
    async start(): Promise<void> {
      consumer = kafka.consumer({
        groupId: options.groupId,
        sessionTimeout: options.sessionTimeoutMs ?? 30_000,
        heartbeatInterval: Math.min(3_000, Math.floor((options.sessionTimeoutMs ?? 30_000) / 3)),
        readUncommitted: false,
        allowAutoTopicCreation: false,
        // A crash ends the process; the orchestrator restarts it from the last committed offset.
        retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
      });
      consumer.on(consumer.events.GROUP_JOIN, () => {
        joined = true;
        metrics.ready.set(1);
      });
      for (const event of [consumer.events.CRASH, consumer.events.STOP, consumer.events.DISCONNECT]) {
        consumer.on(event, () => {
          joined = false;
          metrics.ready.set(0);
        });
      }
      consumer.on(consumer.events.CRASH, (event) => {
        crashError = event.payload.error;
      });
      await consumer.connect();
      await consumer.subscribe({
        topics: [options.topic, options.retryTopic],
        fromBeginning: options.fromBeginning,
      });
      await consumer.run({
        // Offsets are committed only inside the output transactions (sendOffsets).
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: Math.max(1, Math.min(64, options.maxInFlight)),
        eachBatch,
      });
    },

    isReady: () => joined && !draining,

    onCrash(listener: (error: Error) => void): void {
      consumer?.on(consumer.events.CRASH, (event) => {
        listener(event.payload.error);
      });
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
      metrics.ready.set(0);
      try {
        current.pause([{ topic: options.topic }, { topic: options.retryTopic }]);
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
