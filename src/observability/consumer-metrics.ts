import { Counter, Gauge, type Registry } from "prom-client";

/** The consumer's own metrics (concurrency, pauses, retry topic, transactions). */
export function createConsumerMetrics(registry: Registry) {
  return {
    paused: new Gauge({
      name: "reflector_partition_paused",
      help: "1 while consumption is paused because a dependency (Postgres, Redis, Kafka, registry, LLM) is down.",
      registers: [registry],
    }),
    retryTopicMessages: new Counter({
      name: "reflector_retry_topic_messages_total",
      help: "Events handed to the retry topic after their in-process attempts failed.",
      registers: [registry],
    }),
    transactions: new Counter({
      name: "reflector_transactions_total",
      help: "Kafka transactions (outputs + consumed offsets) by result: committed, aborted.",
      labelNames: ["result"] as const,
      registers: [registry],
    }),
    assignedPartitions: new Gauge({
      name: "reflector_consumer_assigned_partitions",
      help: "Input and retry partitions assigned to this instance; 0 while it is not a member of its group.",
      registers: [registry],
    }),
    producerReplacements: new Counter({
      name: "reflector_producer_replacements_total",
      help: "Transactional producers replaced after a failed transaction (a refused produce request breaks their sequence numbers).",
      registers: [registry],
    }),
  };
}

export type ConsumerMetrics = ReturnType<typeof createConsumerMetrics>;
