import { Kafka, logLevel, type LogEntry } from "kafkajs";
import type { Logger } from "../../observability/logger.js";

const levels: Record<number, "error" | "warn" | "info" | "debug"> = {
  [logLevel.ERROR]: "error",
  [logLevel.WARN]: "warn",
  [logLevel.INFO]: "info",
  [logLevel.DEBUG]: "debug",
};

/** kafkajs stays behind this adapter (it is unmaintained); its logs go through pino. */
export function createKafka(options: { brokers: string[]; clientId: string; logger: Logger }): Kafka {
  const kafkaLogger = options.logger.child({ component: "kafkajs" });
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log }: LogEntry) => {
        const { message, ...extra } = log;
        // Retried at once and expected right after each transaction commit: not an error.
        const text = JSON.stringify(log);
        const routine =
          text.includes("CONCURRENT_TRANSACTIONS") ||
          text.includes("concurrent operation on the same transaction");
        kafkaLogger[routine ? "debug" : (levels[level] ?? "info")](extra, message);
      },
    retry: { initialRetryTime: 200, retries: 8 },
  });
}
