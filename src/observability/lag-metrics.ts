import { Counter, Gauge, type Registry } from "prom-client";

/**
 * Consumer-group lag, refreshed by the lag poller (src/adapters/kafka/admin/lag-poller.ts). Labels are the topic and
 * partition only, so the series count is bounded by the partitions Reflector reads.
 */
export function createLagMetrics(registry: Registry) {
  const labelNames = ["topic", "partition"] as const;
  return {
    lagMessages: new Gauge({
      name: "reflector_consumer_lag_messages",
      help: "Messages the consumer group still has to read: log-end offset minus committed offset (the retained log when nothing is committed and the group reads from the beginning).",
      labelNames,
      registers: [registry],
    }),
    lagSeconds: new Gauge({
      name: "reflector_consumer_lag_seconds",
      help: "Estimated age of the oldest unconsumed message, from the broker's time index (0 when caught up).",
      labelNames,
      registers: [registry],
    }),
    committedOffset: new Gauge({
      name: "reflector_consumer_committed_offset",
      help: "The group's committed offset (absent while nothing is committed).",
      labelNames,
      registers: [registry],
    }),
    logEndOffset: new Gauge({
      name: "reflector_consumer_log_end_offset",
      help: "The partition's log-end offset (high watermark), as kafka-consumer-groups.sh reports it.",
      labelNames,
      registers: [registry],
    }),
    refreshErrors: new Counter({
      name: "reflector_consumer_lag_refresh_errors_total",
      help: "Lag refreshes that failed (the Kafka admin client could not answer).",
      registers: [registry],
    }),
  };
}

export type LagMetrics = ReturnType<typeof createLagMetrics>;
