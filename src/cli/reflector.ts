import { readFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { buildKafka, createTopics, migrateDatabase } from "../composition/builders.js";
import { configOrExit, failureLine } from "./config-or-exit.js";
import { computeErrorSignature, maskVolatileTokens } from "../domain/signature.js";
import { runOtlpBridge, runProcessor } from "../main.js";
import { createLogger } from "../observability/logger.js";
import { registerLessonsCommand } from "./lessons-command.js";
import { registerMaintenanceCommands } from "./maintenance-commands.js";
import { registerOpsCommands } from "./ops-commands.js";
import { demoTargetProblem } from "./production-guard.js";
import { registerSplitCommand } from "./split-command.js";

// kafkajs 2.2.4 schedules a timer with a negative delay on Node ≥ 23 (tulios/kafkajs#1751); Node
// clamps it to 1 ms, which is what kafkajs meant, and warns. Drop that one warning, nothing else.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
  const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
  if (type === "TimeoutNegativeWarning") return;
  Reflect.apply(emitWarning, process, [warning, ...rest]);
};

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

/** A count of migrations to roll back: a positive integer, or a usage error that names the value. */
export function migrationCount(value: string): number {
  const count = Number(value);
  if (!/^\d+$/.test(value) || count < 1)
    throw new InvalidArgumentError(`"${value}" is not a number of migrations (1 or more)`);
  return count;
}

const program = new Command()
  .name("reflector")
  .description("Turns AI agents' task traces into judged, deduplicated, executable lessons.")
  .version(version)
  .showHelpAfterError();

program
  .command("start")
  .description("run the stream processor (HTTP health and metrics on HTTP_PORT)")
  .action(async () => {
    const config = configOrExit();
    await runProcessor(config, createLogger(config.logLevel));
  });

program
  .command("otlp-bridge")
  .description("run only the OTLP ingest bridge: OpenTelemetry traces on OTLP_TOPIC in, task events out")
  .action(async () => {
    const config = configOrExit();
    if (config.otlp.topic === undefined) {
      process.stderr.write(
        "reflector: invalid configuration:\n  - OTLP_TOPIC: the bridge needs the topic of OTLP trace records\n",
      );
      process.exitCode = 2;
      return;
    }
    await runOtlpBridge(config, createLogger(config.logLevel));
  });

program
  .command("migrate")
  .description("create the database if needed and apply pending migrations")
  .addOption(new Option("--down <count>", "roll back this many migrations").argParser(migrationCount))
  .action(async (options: { down?: number }) => {
    const config = configOrExit();
    const applied = await migrateDatabase(config, options.down ? { down: options.down } : {});
    console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
  });

program
  .command("topics")
  .description("create Reflector's topics (existing ones are left alone)")
  .action(async () => {
    const config = configOrExit();
    const result = await createTopics(config, buildKafka(config, createLogger("warn"), "admin")).catch(
      (err: unknown) => {
        process.stderr.write(`${failureLine("topics", err)}\n`);
        process.exit(1);
      },
    );
    for (const name of result.created)
      console.log(`created  ${name} (${config.topics.partitions} partitions)`);
    for (const name of result.existing) console.log(`exists   ${name}`);
  });

program
  .command("signature")
  .description("print the error signature the pipeline files an event's reported error under")
  .requiredOption(
    "--type <type>",
    "error type (the event's error.type, else its category), e.g. timeout_error",
  )
  .requiredOption("--content <content>", "the error's message")
  .option("--code <code>", "the error's code, when the event reports one")
  .option("--no-mask", "hash the message as given, without masking ids, numbers and timestamps")
  .action((options: { type: string; content: string; code?: string; mask: boolean }) => {
    // As the pipeline reads an event's error: its code and message, masked (signatureInputFor).
    const content = `${options.code ?? ""} ${options.content}`;
    console.log(computeErrorSignature(options.type, options.mask ? maskVolatileTokens(content) : content));
  });

program
  .command("score")
  .description(
    'judge a reflection by the quality rules: reads {"reflection": {...}, "task": {...}?} as JSON on stdin',
  )
  .option("--tenant <tenantId>", "count pattern evidence and novelty from this tenant's stored reflections")
  .action(async (options: { tenant?: string }) => {
    const { runScoreCommand } = await import("./score-command.js");
    process.exitCode = await runScoreCommand(options.tenant);
  });

program
  .command("demo")
  .description("start local services if needed, process the examples and print what came out")
  .option(
    "--allow-remote",
    "run against services that are not on this machine, or where REFLECTOR_ENV=production",
  )
  .action(async (options: { allowRemote?: boolean }) => {
    const refused = options.allowRemote ? null : demoTargetProblem(process.env);
    if (refused !== null) {
      console.error(`reflector demo: ${refused}`);
      process.exitCode = 2;
      return;
    }
    const { runDemo } = await import("./demo.js");
    process.exitCode = await runDemo();
  });

program
  .command("reflect")
  .description(
    "reflect on one trace file (an agent.task.completed event or an OTLP/JSON export): attribution, lesson and verdict, without Kafka or a database",
  )
  .argument("<file>", "the trace file")
  .action(async (file: string) => {
    const { runReflectCommand } = await import("./reflect-command.js");
    process.exitCode = await runReflectCommand(file);
  });

registerLessonsCommand(program);
registerOpsCommands(program);
registerMaintenanceCommands(program);
registerSplitCommand(program);

export async function runCli(argv: string[]): Promise<void> {
  await program.parseAsync(argv);
}
