import { Counter, Gauge, Histogram, type Registry } from "prom-client";

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
    deferredEvents: new Counter({
      name: "reflector_deferred_events_total",
      help: "Input events handed to the retry topic unprocessed because their tenant held its whole share of the events in flight (CONSUMER_MAX_IN_FLIGHT_PER_TENANT).",
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
    eventPhases: new Histogram({
      name: "reflector_event_phase_seconds",
      help: "Where an input record's time goes, by phase: fetch (record timestamp to its batch reaching the consumer), queue (waiting for a slot, its loop family or the signature gate), run (processing), ordered (done, waiting for earlier offsets of its partition), commit (its Kafka transaction).",
      labelNames: ["phase"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
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
