import type { Admin } from "kafkajs";
import type { Logger } from "../../../observability/logger.js";
import type { LagMetrics } from "../../../observability/lag-metrics.js";
import { readConsumerLag, type LagRow, type ReadLagOptions } from "./consumer-lag.js";

export interface LagPollerOptions extends ReadLagOptions {
  admin: Admin;
  metrics: LagMetrics;
  logger: Logger;
  /** 0 disables the poller. */
  intervalMs: number;
}

/** Writes one read of the lag into the gauges; series of partitions no longer read disappear. */
export function exportLag(metrics: LagMetrics, rows: LagRow[]): void {
  // No await between the resets and the sets: a scrape never sees the gauges half filled.
  metrics.lagMessages.reset();
  metrics.lagSeconds.reset();
  metrics.committedOffset.reset();
  metrics.logEndOffset.reset();
  for (const row of rows) {
    const labels = { topic: row.topic, partition: String(row.partition) };
    metrics.lagMessages.set(labels, row.pending);
    metrics.logEndOffset.set(labels, row.logEndOffset);
    if (row.currentOffset !== null) metrics.committedOffset.set(labels, row.currentOffset);
    if (row.lagSeconds !== null) metrics.lagSeconds.set(labels, row.lagSeconds);
  }
}

/**
 * Refreshes the lag gauges every `intervalMs` while the processor runs. It must never take the
 * process down: a failed refresh counts in `reflector_consumer_lag_refresh_errors_total`, logs, and
 * the gauges keep their last values (the alert on that counter says they are stale).
 */
export function createLagPoller(options: LagPollerOptions) {
  const { admin, metrics, logger } = options;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let connected = false;
  let stopped = false;

  async function refresh(): Promise<void> {
    try {
      if (!connected) {
        await admin.connect();
        connected = true;
      }
      exportLag(metrics, await readConsumerLag(admin, options));
    } catch (err) {
      metrics.refreshErrors.inc();
      logger.warn({ err }, "consumer lag refresh failed");
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = refresh().finally(() => {
        running = null;
        schedule();
      });
    }, options.intervalMs);
    // The poller alone never keeps the process alive.
    timer.unref();
  }

  return {
    /** Refreshes once now (so /metrics has lag from the start), then on the interval. */
    start(): void {
      if (options.intervalMs <= 0 || stopped) return;
      running = refresh().finally(() => {
        running = null;
        schedule();
      });
    },
    /** One refresh on demand (tests, and the first scrape after a manual check). */
    refresh,
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      if (connected) await admin.disconnect().catch(() => undefined);
      connected = false;
    },
  };
}

export type LagPoller = ReturnType<typeof createLagPoller>;
