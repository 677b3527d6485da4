import type { Admin } from "kafkajs";
import { within } from "../../domain/within.js";

/**
 * Readiness of Kafka for this process: the output producer is connected and a broker answers a
 * metadata request now. kafkajs reports a producer disconnect only when it is closed, so the
 * connection flag alone would stay true through a broker outage.
 */
export function createKafkaHealthCheck(options: {
  /** An admin client without retries: a probe answers within `timeoutMs` or counts as down. */
  admin: Admin;
  isProducerConnected: () => boolean;
  timeoutMs: number;
}) {
  const { admin } = options;
  let connecting: Promise<void> | null = null;
  // One probe at a time: a slow broker must not pile up requests from frequent probes.
  let inFlight: Promise<boolean> | null = null;

  function probe(): Promise<boolean> {
    connecting ??= admin.connect().catch((err: unknown) => {
      connecting = null;
      throw err;
    });
    return connecting.then(() => admin.describeCluster()).then((cluster) => cluster.brokers.length > 0);
  }

  return {
    async check(): Promise<boolean> {
      if (!options.isProducerConnected()) return false;
      inFlight ??= probe()
        .catch(() => false)
        .finally(() => {
          inFlight = null;
        });
      return within(inFlight, options.timeoutMs, false);
    },
    async close(): Promise<void> {
      if (connecting) await admin.disconnect().catch(() => undefined);
      connecting = null;
    },
  };
}
