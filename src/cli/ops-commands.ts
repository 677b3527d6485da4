import { InvalidArgumentError, Option, type Command } from "commander";
import {
  boundTopics,
  buildCodec,
  buildKafka,
  buildLogOffsets,
  formatLagTable,
  readConsumerLag,
  replayDeadLetters,
  type ReplaySummary,
} from "../composition/builders.js";
import type { Config } from "../config/config.js";
import { configOrExit, failureLine } from "./config-or-exit.js";
import { createLogger } from "../observability/logger.js";

function kafkaFor(config: Config, role: string) {
  // kafkajs logs every retry at error level; the command prints the one error that matters.
  return buildKafka(config, createLogger("fatal"), role);
}

/** One line on stderr and exit code 1, not a stack trace: the usual cause is an unreachable broker. */
function fail(what: string, err: unknown): void {
  process.stderr.write(`${failureLine(what, err)}\n`);
  process.exitCode = 1;
}

function positiveMs(value: string): number {
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 1)
    throw new InvalidArgumentError(`"${value}" is not a number of milliseconds`);
  return ms;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function printSummary(summary: ReplaySummary, dryRun: boolean): void {
  for (const item of summary.items) {
    const what = item.action === "skipped" ? `skipped (${item.reason ?? ""})` : item.action;
    console.log(
      `${what}  dlq:${String(item.partition)}:${item.offset}  key=${item.key ?? "-"}  code=${item.code}`,
    );
  }
  const verb = dryRun ? "would replay" : "replayed";
  console.log(`${verb} ${String(summary.replayed)}, skipped ${String(summary.skipped)}`);
  for (const [code, counts] of Object.entries(summary.byCode).sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${code}: ${verb} ${String(counts.replayed)}, skipped ${String(counts.skipped)}`);
  }
  if (summary.unfinished.length > 0) {
    console.log(`not read to the end: partitions ${summary.unfinished.join(", ")} (run again to continue)`);
  }
}

/** Operator commands (consumer lag, DLQ replay). Owned by the operations work (issue 6). */
export function registerOpsCommands(program: Command): void {
  program
    .command("lag")
    .description("consumer lag per partition, like kafka-consumer-groups.sh --describe, plus LAG-SECONDS")
    .option("--group <group>", "consumer group (default: KAFKA_GROUP_ID)")
    .option(
      "--topic <topic>",
      "topic to show, repeatable (default: TOPIC_TASK_COMPLETED, or the topics TENANT_TOPIC_BINDING covers, and TOPIC_RETRY)",
      collect,
      [],
    )
    .option("--json", "print an array of row objects", false)
    .addOption(
      new Option("--timeout <ms>", "give up when the brokers have not answered within this long")
        .argParser(positiveMs)
        .default(10_000),
    )
    .action(async (options: { group?: string; topic: string[]; json: boolean; timeout: number }) => {
      const config = configOrExit();
      const kafka = kafkaFor(config, "lag");
      const admin = kafka.admin();
      const logOffsets = buildLogOffsets(kafka);
      // kafkajs retries an unreachable broker for about 40 s without a word: say so sooner.
      const deadline = setTimeout(() => {
        process.stderr.write(
          `reflector: lag failed: no answer from KAFKA_BROKERS (${config.kafka.brokers.join(",")}) within ${String(options.timeout)} ms\n`,
        );
        process.exit(1);
      }, options.timeout);
      try {
        await admin.connect();
        const rows = await readConsumerLag(admin, {
          logOffsets: (topic) => logOffsets.offsets(topic),
          groupId: options.group ?? config.kafka.groupId,
          topics:
            options.topic.length > 0
              ? options.topic
              : [
                  // Under TENANT_TOPIC_BINDING the inputs are the bound topics the cluster has.
                  ...(config.tenancy.binding
                    ? await boundTopics(admin, config.tenancy.binding)
                    : [config.topics.taskCompleted]),
                  config.topics.retry,
                ],
          fromBeginning: config.kafka.fromBeginning,
        });
        console.log(options.json ? JSON.stringify(rows, null, 2) : formatLagTable(rows));
      } catch (err) {
        fail("lag", err);
      } finally {
        clearTimeout(deadline);
        await Promise.all([admin.disconnect(), logOffsets.close()]);
      }
    });

  const dlq = program.command("dlq").description("the dead-letter topic (TOPIC_DLQ)");
  dlq
    .command("replay")
    .description("re-publish dead letters to TOPIC_TASK_COMPLETED, up to the DLQ's end at start")
    .addOption(new Option("--max <count>", "replay at most this many messages").argParser(Number))
    .option("--dry-run", "list what would be replayed; produce and commit nothing", false)
    .option("--group <group>", "the replay's consumer group (default: <KAFKA_GROUP_ID>.dlq-replay)")
    .addOption(
      new Option("--idle-timeout-ms <ms>", "stop when nothing arrives for this long")
        .argParser(Number)
        .default(30_000),
    )
    .action(async (options: { max?: number; dryRun: boolean; group?: string; idleTimeoutMs: number }) => {
      const config = configOrExit();
      if (options.max !== undefined && !(Number.isInteger(options.max) && options.max > 0)) {
        process.stderr.write("reflector: --max must be a positive integer\n");
        process.exit(2);
      }
      if (!(Number.isInteger(options.idleTimeoutMs) && options.idleTimeoutMs > 0)) {
        process.stderr.write("reflector: --idle-timeout-ms must be a positive integer\n");
        process.exit(2);
      }
      const binding = config.tenancy.binding;
      const codec = buildCodec(config);
      const summary = await replayDeadLetters({
        kafka: kafkaFor(config, "dlq-replay"),
        deadLetterTopic: config.topics.deadLetter,
        targetTopic: config.topics.taskCompleted,
        sourceTopics: [config.topics.taskCompleted, config.topics.retry],
        // Each event is checked against the binding before it goes back: the dead letter's header
        // chooses the destination, the event's tenant must be that topic's.
        ...(binding ? { tenancy: { binding, decode: (value: Buffer) => codec.decode(value) } } : {}),
        groupId: options.group ?? `${config.kafka.groupId}.dlq-replay`,
        ...(options.max !== undefined ? { max: options.max } : {}),
        dryRun: options.dryRun,
        idleTimeoutMs: options.idleTimeoutMs,
        logger: createLogger("warn"),
      }).catch((err: unknown) => {
        fail("dlq replay", err);
        return null;
      });
      if (summary) printSummary(summary, options.dryRun);
    });
}
