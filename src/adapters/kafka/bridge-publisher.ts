import { Partitioners, type Kafka, type Message, type Producer } from "kafkajs";
import type { TaskCompleted } from "../../domain/contracts/index.js";
import type { BridgePublisher } from "../../pipeline/otlp-bridge-ports.js";

export interface BridgePublisherOptions {
  kafka: Kafka;
  /** The processor's input topic. */
  topic: string;
  deadLetterTopic: string;
  /** Where the spans came from, named in the dead letters of traces the contract refuses. */
  sourceTopic: string;
  groupId: string;
  /** The value as any producer would write it (JSON, or the registry's wire format when one is set). */
  encode(event: TaskCompleted): Promise<Buffer>;
}

/**
 * Publishes the bridge's task events like any agent would: keyed by `loopId`, with `ce_id` (the
 * event id) and the trace's `traceparent` as headers, from an idempotent producer whose send
 * resolves once every record is acknowledged.
 */
export function createBridgePublisher(options: BridgePublisherOptions): BridgePublisher & {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
} {
  const producer: Producer = options.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
  });
  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),

    async publish(events) {
      const messages: Message[] = await Promise.all(
        events.map(async ({ event, traceparent }) => ({
          key: event.loopId,
          value: await options.encode(event),
          headers: { ce_id: event.eventId, traceparent },
        })),
      );
      await producer.send({ topic: options.topic, messages });
    },

    async deadLetter(traceId, candidate, reason) {
      await producer.send({
        topic: options.deadLetterTopic,
        messages: [
          {
            key: traceId,
            value: JSON.stringify(candidate ?? null),
            headers: {
              "reflector.error.code": "SCHEMA_INVALID",
              "reflector.error.message": `the event built from trace ${traceId}: ${reason}`.slice(0, 2000),
              "reflector.original.topic": options.sourceTopic,
              "reflector.consumer.group": options.groupId,
              "reflector.failed.at": new Date().toISOString(),
              "reflector.otlp.trace-id": traceId,
            },
          },
        ],
      });
    },
  };
}
