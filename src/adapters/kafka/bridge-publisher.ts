import type { Kafka, Message, Producer } from "kafkajs";
import type { TaskCompleted } from "../../domain/contracts/index.js";
import { errorMessage, ReflectorError } from "../../domain/errors.js";
import type { BridgedEvent, BridgePublisher, TraceRef } from "../../pipeline/otlp-bridge-ports.js";
import { valueOmittedHeader } from "./failure-records.js";
import { createProducer } from "./producers.js";
import { fitsAlone, recordBytes, splitBySize, type SizeLimits } from "./record-size.js";

export interface BridgePublisherOptions {
  kafka: Kafka;
  /** The processor's input topic. */
  topic: string;
  deadLetterTopic: string;
  /** Where the spans came from, named in the dead letters of traces the contract refuses. */
  sourceTopic: string;
  groupId: string;
  /** The topics' `max.message.bytes` and the request limit: sends are split to respect them. */
  limits: SizeLimits;
  /** The value as any producer would write it (JSON, or the registry's wire format when one is set). */
  encode(event: TaskCompleted): Promise<Buffer>;
}

/**
 * Broker errors that refuse a record, not the connection: retrying the same bytes cannot help,
 * so the record's trace is dead-lettered instead of blocking every sweep after it.
 */
const refusedRecord = new Set([
  "MESSAGE_TOO_LARGE",
  "RECORD_LIST_TOO_LARGE",
  "INVALID_RECORD",
  "CORRUPT_MESSAGE",
  "INVALID_REQUIRED_ACKS",
]);

function isRecordRefused(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth += 1) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === "string" && refusedRecord.has(type)) return true;
    e = (e as { originalError?: unknown; cause?: unknown }).originalError ?? (e as { cause?: unknown }).cause;
  }
  return false;
}

/** A Kafka failure as the bridge's sweep should see it: a publish to retry, never a database outage. */
function publishFailed(err: unknown): ReflectorError {
  return new ReflectorError("PUBLISH_FAILED", `publishing the bridge's events: ${errorMessage(err)}`, {
    cause: err,
  });
}

/**
 * Publishes the bridge's task events like any agent would: keyed by `loopId`, with `ce_id` (the
 * event id) and the trace's `traceparent` as headers, from an idempotent producer whose send
 * resolves once every record is acknowledged. Sends are split like the processor's (each under
 * the topic's and the request's limits); a record the topic would refuse, or refuses, is
 * dead-lettered instead, without its value when the dead-letter topic would refuse that too.
 */
export function createBridgePublisher(options: BridgePublisherOptions): BridgePublisher & {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
} {
  const { limits } = options;
  const producer: Producer = createProducer(options.kafka);

  async function send(topic: string, messages: Message[]): Promise<void> {
    try {
      await producer.send({ topic, messages, acks: -1 });
    } catch (err) {
      if (isRecordRefused(err)) throw err;
      throw publishFailed(err);
    }
  }

  async function deadLetter(
    trace: TraceRef,
    value: string | Buffer | null,
    code: "SCHEMA_INVALID" | "OUTPUT_TOO_LARGE",
    reason: string,
  ): Promise<void> {
    const headers = {
      "reflector.error.code": code,
      "reflector.error.message": `the event built from trace ${trace.traceId}: ${reason}`.slice(0, 2000),
      "reflector.original.topic": options.sourceTopic,
      "reflector.consumer.group": options.groupId,
      "reflector.failed.at": new Date().toISOString(),
      "reflector.otlp.trace-id": trace.traceId,
      ...(trace.tenantId !== "" ? { "reflector.otlp.tenant-id": trace.tenantId.slice(0, 200) } : {}),
    };
    const full: Message = { key: trace.traceId, value, headers };
    const message: Message = fitsAlone(full, options.deadLetterTopic, limits)
      ? full
      : {
          key: trace.traceId,
          value: null,
          headers: {
            ...headers,
            [valueOmittedHeader]: `${String(value?.length ?? 0)} bytes over the dead-letter topic's size limit; the trace's spans were dropped`,
          },
        };
    await send(options.deadLetterTopic, [message]);
  }

  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),

    async publish(events) {
      const refused = new Set<BridgedEvent>();
      const eventOf = new Map<Message, BridgedEvent>();
      const fitting: Message[] = [];
      for (const bridged of events) {
        const message: Message = {
          key: bridged.event.loopId,
          value: await options.encode(bridged.event),
          headers: { ce_id: bridged.event.eventId, traceparent: bridged.traceparent },
        };
        const trace = { tenantId: bridged.event.tenantId, traceId: bridged.event.taskId };
        if (fitsAlone(message, options.topic, limits)) {
          eventOf.set(message, bridged);
          fitting.push(message);
        } else {
          await deadLetter(
            trace,
            null,
            "OUTPUT_TOO_LARGE",
            `its record would be ${String(recordBytes(message))} bytes, over what ${options.topic} accepts`,
          );
          refused.add(bridged);
        }
      }
      if (fitting.length === 0) return refused;
      for (const batch of splitBySize([{ topic: options.topic, messages: fitting }], limits)) {
        const messages = batch.flatMap((topicMessages) => topicMessages.messages);
        try {
          await send(options.topic, messages);
        } catch (err) {
          if (!isRecordRefused(err)) throw err;
          // The broker refused the send (a topic limit lower than the one read): each record
          // alone, so only the ones it refuses are dead-lettered.
          for (const message of messages) {
            try {
              await send(options.topic, [message]);
            } catch (alone) {
              if (!isRecordRefused(alone)) throw publishFailed(alone);
              const bridged = eventOf.get(message);
              if (!bridged) throw alone;
              await deadLetter(
                { tenantId: bridged.event.tenantId, traceId: bridged.event.taskId },
                null,
                "OUTPUT_TOO_LARGE",
                `${options.topic} refused its record: ${errorMessage(alone)}`,
              );
              refused.add(bridged);
            }
          }
        }
      }
      return refused;
    },

    async deadLetter(trace, candidate, reason) {
      await deadLetter(trace, JSON.stringify(candidate ?? null), "SCHEMA_INVALID", reason);
    },
  };
}
