import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Config } from "../../src/config/config.js";

const cli = fileURLToPath(new URL("./run-cli.ts", import.meta.url));
const root = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

/** The environment that points a CLI child process at a harness's Kafka, group and topics. */
export function cliEnv(config: Config, extra: Record<string, string> = {}): Record<string, string> {
  const t = config.topics;
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    KAFKA_BROKERS: config.kafka.brokers.join(","),
    KAFKA_GROUP_ID: config.kafka.groupId,
    KAFKA_CLIENT_ID: config.kafka.clientId,
    KAFKA_FROM_BEGINNING: String(config.kafka.fromBeginning),
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redis.url,
    REDIS_KEY_PREFIX: config.redis.keyPrefix,
    HTTP_PORT: "0",
    HTTP_HOST: "127.0.0.1",
    TOPIC_TASK_COMPLETED: t.taskCompleted,
    TOPIC_REFLECTION_ACCEPTED: t.reflectionAccepted,
    TOPIC_REFLECTION_REJECTED: t.reflectionRejected,
    TOPIC_LOOP_DECISION: t.loopDecision,
    TOPIC_DLQ: t.deadLetter,
    TOPIC_RETRY: t.retry,
    TOPIC_REFLECTION_FEEDBACK: t.reflectionFeedback,
    LOG_LEVEL: "warn",
    ...extra,
  };
}

/** Runs `reflector <args>` from source as a child process; rejects on a non-zero exit. */
export async function runReflector(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", cli, ...args], {
    env,
    cwd: root,
    maxBuffer: 10 * 1024 * 1024,
  });
  return stdout;
}

/** Runs Kafka's own kafka-consumer-groups tool (scripts/kafka-consumer-groups.sh). */
export async function kafkaConsumerGroups(args: string[]): Promise<string> {
  const { stdout } = await run("bash", [`${root}scripts/kafka-consumer-groups.sh`, ...args], {
    cwd: root,
    maxBuffer: 10 * 1024 * 1024,
  });
  return stdout;
}

export interface ToolRow {
  group: string;
  topic: string;
  partition: number;
  currentOffset: string;
  logEndOffset: string;
  lag: string;
  consumerId: string;
  host: string;
  clientId: string;
}

/** Parses `kafka-consumer-groups.sh --describe`'s table (the header line, then one row per partition). */
export function parseDescribe(output: string): ToolRow[] {
  const lines = output.split("\n").map((line) => line.trim());
  const header = lines.findIndex((line) => line.startsWith("GROUP ") && line.includes("LOG-END-OFFSET"));
  if (header < 0) throw new Error(`no table in kafka-consumer-groups output:\n${output}`);
  return lines
    .slice(header + 1)
    .filter((line) => line.length > 0)
    .map((line) => {
      const [group, topic, partition, currentOffset, logEndOffset, lag, consumerId, host, clientId] =
        line.split(/\s+/);
      if (clientId === undefined) throw new Error(`unexpected row: ${line}`);
      return {
        group: group ?? "",
        topic: topic ?? "",
        partition: Number(partition),
        currentOffset: currentOffset ?? "",
        logEndOffset: logEndOffset ?? "",
        lag: lag ?? "",
        consumerId: consumerId ?? "",
        host: host ?? "",
        clientId,
      };
    });
}
