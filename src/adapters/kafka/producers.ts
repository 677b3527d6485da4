import { Partitioners, type Kafka, type Producer } from "kafkajs";

/** A Kafka producer, for the composition root to hold without naming the client library. */
export type KafkaProducer = Producer;

export interface ProducerOptions {
  /**
   * Makes the producer transactional under this id (outputs and consumed offsets commit together,
   * docs/delivery-guarantees.md); without it the producer is idempotent only.
   */
  transactionalId?: string;
  /**
   * The first retry's delay in ms (the client's, 200 ms, when absent: src/adapters/kafka/kafka-client.ts). The transactional producer
   * sets 10: right after a commit the coordinator answers CONCURRENT_TRANSACTIONS for a few ms
   * while it writes the markers, and a long first retry would cap the transactions per second.
   */
  initialRetryTime?: number;
}

/**
 * The one way Reflector builds a producer: idempotent, one request in flight (so a retried batch
 * never overtakes the next one), no topic created by accident, and the Java client's partitioner,
 * so a key lands on the partition an agent's producer would choose. It retries without limit:
 * an idempotent producer whose retries run out mid-sequence breaks the order of what follows, so
 * the caller's deadline (a stop, a shutdown) is what ends a send that cannot complete.
 */
export function createProducer(kafka: Kafka, options: ProducerOptions = {}): Producer {
  return kafka.producer({
    idempotent: true,
    ...(options.transactionalId !== undefined ? { transactionalId: options.transactionalId } : {}),
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: {
      retries: Number.MAX_SAFE_INTEGER,
      ...(options.initialRetryTime !== undefined ? { initialRetryTime: options.initialRetryTime } : {}),
      maxRetryTime: 30_000,
    },
  });
}

/**
 * A producer for a request a client is waiting on (OTLP over HTTP): not idempotent, and a few
 * quick retries, so a send that cannot complete soon fails and the client is told to retry (the
 * OTLP exporters do). A record stored twice is harmless there: the bridge stores a span once.
 */
export function createRequestProducer(kafka: Kafka): Producer {
  return kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 5_000 },
  });
}
