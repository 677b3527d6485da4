import { randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { SingleBar, Presets } from "cli-progress";
import { createApp } from "../app.js";
import {
  buildCodec,
  buildKafka,
  buildPostgresPool,
  buildProducer,
  createTopics,
  migrateDatabase,
} from "../builders.js";
import { loadConfig } from "../config/config.js";
import type { LoopDecision, ReflectionOutcome, TaskCompleted } from "../domain/contracts/index.js";
import { selectForReflection } from "../domain/select-for-reflection.js";
import { createLogger } from "../observability/logger.js";
import {
  countVerdicts,
  formatCounts,
  printLessons,
  printResults,
  printVerdicts,
  truncate,
  type Row,
  type VerdictCounts,
} from "./demo-report.js";
import {
  ensureLocalServices,
  loadExamples,
  recordedPass,
  root,
  withoutCredentials,
  type Example,
} from "./demo-setup.js";

/** A Kafka message's headers as the client hands them over. */
type Headers = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

function headerString(headers: Headers | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return (Array.isArray(value) ? value[0] : value)?.toString();
}

/** One run of the examples through a processor, as one tenant. */
interface Pass {
  tenantId: string;
  /** Appended to event and loop ids, so every run of the demo is new to Reflector. */
  suffix: string;
  /** The input topic of the pass's processor. */
  topic: string;
  rows: Map<string, Row>;
  /** A rerun chain's next loop id → its example and the step it is at. */
  chainOf: Map<string, { example: Example; step: number }>;
}

/**
 * The demo, two processors side by side:
 * - the offline generator on every example: every verdict, the lessons, the loop decisions, a
 *   dead letter, and a replay of every event that changes nothing;
 * - the `openai` generator on the examples' failures, answered by a capable model's recorded
 *   answers that a local server replays (no model is reached), on topics and a consumer group of
 *   its own: a lesson whose third occurrence proves its patterns is `accepted`.
 */
export async function runDemo(): Promise<number> {
  ensureLocalServices();
  const runId = randomUUID().slice(0, 8);
  const config = loadConfig({
    ...process.env,
    KAFKA_GROUP_ID: process.env.KAFKA_GROUP_ID ?? "reflector-demo",
    HTTP_PORT: process.env.HTTP_PORT ?? "0",
  });
  mkdirSync(`${root}.services`, { recursive: true });
  const logFile = `${root}.services/demo.log`;
  const logger = createLogger(process.env.LOG_LEVEL ?? "info", createWriteStream(logFile, { flags: "a" }));
  const examples = await loadExamples();
  const recorded = await recordedPass(config, examples);

  console.log(`Migrating ${withoutCredentials(config.databaseUrl)} …`);
  await migrateDatabase(config);
  const kafka = buildKafka(config, logger, "demo");
  await createTopics(config, kafka);
  await createTopics(recorded.config, kafka);

  const codec = buildCodec(config);
  const producer = buildProducer(kafka);
  await producer.connect();
  const viewer = kafka.consumer({ groupId: `reflector-demo-viewer-${runId}` });
  await viewer.connect();
  const t = config.topics;
  await viewer.subscribe({
    topics: [t.reflectionAccepted, t.reflectionRejected, t.loopDecision, t.deadLetter],
    fromBeginning: true,
  });

  const passes = new Map<string, Pass>();
  const deadLetters: { example: string; offset: string; code: string; reason: string; seen: boolean }[] = [];
  let replayed = 0;

  const publish = async (pass: Pass, example: Example, step: number, event: TaskCompleted) => {
    pass.rows.set(event.eventId, {
      order: examples.indexOf(example) * 100 + step,
      example: example.name,
      step,
      event,
      expectsOutcome: selectForReflection(event, config.mode).reflect,
    });
    const value = await codec.encode(pass.topic, "task-completed.v1", event);
    await producer.send({
      topic: pass.topic,
      messages: [{ key: event.loopId, value, headers: { ce_id: event.eventId } }],
    });
  };
  const personalise = (
    pass: Pass,
    event: TaskCompleted,
    loopId: string,
    rerunOf: string | undefined,
  ): TaskCompleted => ({
    ...event,
    eventId: `${event.eventId}-${pass.suffix}`,
    tenantId: pass.tenantId,
    loopId,
    ...(rerunOf ? { rerunOf } : {}),
  });

  await viewer.run({
    eachMessage: async ({ topic, message }) => {
      if (topic === t.deadLetter) {
        const offset = headerString(message.headers, "reflector.original.offset");
        const dead = deadLetters.find((d) => d.offset === offset);
        if (dead) {
          dead.seen = true;
          dead.code = headerString(message.headers, "reflector.error.code") ?? "?";
          dead.reason = headerString(message.headers, "reflector.error.message") ?? "?";
        }
        return;
      }
      if (!message.value) return;
      const value = (await codec.decode(message.value)) as { tenantId?: string; sourceEventId?: string };
      const pass = value.tenantId ? passes.get(value.tenantId) : undefined;
      const row = value.sourceEventId ? pass?.rows.get(value.sourceEventId) : undefined;
      if (!pass || !row) return;
      if (topic === t.loopDecision) {
        const decision = value as LoopDecision;
        if (row.decision) {
          replayed += 1;
          return;
        }
        row.decision = decision;
        const chain = pass.chainOf.get(decision.loopId);
        const next = chain?.example.events?.[chain.step + 1];
        if (chain && next && decision.decision === "rerun" && decision.newLoopId) {
          pass.chainOf.set(decision.newLoopId, { example: chain.example, step: chain.step + 1 });
          await publish(
            pass,
            chain.example,
            chain.step + 1,
            personalise(pass, next, decision.newLoopId, decision.loopId),
          );
        }
      } else {
        row.outcome = value as ReflectionOutcome;
      }
    },
  });

  /** Publishes the examples as a new tenant; the viewer publishes each rerun when its decision comes. */
  const publishPass = async (tenantId: string, suffix: string, topic: string, chosen: Example[]) => {
    const pass: Pass = { tenantId, suffix, topic, rows: new Map(), chainOf: new Map() };
    passes.set(tenantId, pass);
    for (const example of chosen) {
      if (example.raw !== undefined) {
        const [meta] = await producer.send({ topic, messages: [{ key: "malformed", value: example.raw }] });
        deadLetters.push({
          example: example.name,
          offset: meta?.baseOffset ?? "?",
          code: "",
          reason: "",
          seen: false,
        });
        continue;
      }
      const first = example.events?.[0];
      if (!first) continue;
      const loopId = `${first.loopId}-${suffix}`;
      pass.chainOf.set(loopId, { example, step: 0 });
      await publish(pass, example, 0, personalise(pass, first, loopId, undefined));
    }
    return pass;
  };

  const app = createApp(config, logger);
  const modelApp = createApp(recorded.config, logger, { generator: recorded.generator });
  await Promise.all([app.start(), modelApp.start()]);
  console.log(
    `Processors running: the offline one (group ${config.kafka.groupId}, generator ${app.generatorName}) and the ` +
      `recorded-answers one (group ${recorded.config.kafka.groupId}, generator ${modelApp.generatorName}); ` +
      `embedder ${app.embedderName}; logs in ${logFile}`,
  );
  console.log(
    `The second one's model is RECORDED ANSWERS REPLAYED by a local server (${recorded.server.url}), not a live model: ` +
      `${String(recorded.recordings.length)} answers a capable model gave once to these exact requests ` +
      "(test/fixtures/recorded-answers/PROVENANCE.md), each served to the request carrying the trace it answers; a " +
      `request with no recorded answer gets an error. It gets the ${String(recorded.chosen.length)} examples whose every reflected event has one.`,
  );
  console.log(
    `Publishing ${String(examples.length)} examples as tenant demo-${runId} and ${String(recorded.chosen.length)} as tenant demo-${runId}-recorded (${codec.format} values)…`,
  );
  const offline = await publishPass(`demo-${runId}`, runId, t.taskCompleted, examples);
  const model = await publishPass(
    `demo-${runId}-recorded`,
    `${runId}-r`,
    recorded.config.topics.taskCompleted,
    recorded.chosen,
  );

  const rows = () => [offline, model].flatMap((pass) => [...pass.rows.values()]);
  const done = () =>
    rows().every((r) => r.decision && (!r.expectsOutcome || r.outcome)) && deadLetters.every((d) => d.seen);
  const bar = new SingleBar(
    {
      format: "Waiting for Reflector  [{bar}] {value}/{total} results",
      noTTYOutput: true,
      notTTYSchedule: 2000,
    },
    Presets.shades_classic,
  );
  const total = () => rows().length + deadLetters.length;
  const received = () => rows().filter((r) => r.decision).length + deadLetters.filter((d) => d.seen).length;
  bar.start(total(), 0);
  const deadline = Date.now() + 180_000;
  while (!done() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    bar.setTotal(total());
    bar.update(received());
  }
  bar.update(received());
  bar.stop();
  const complete = done();

  // Publish every valid event of the offline pass again, as a retrying producer or a DLQ replay
  // would: each is a second record of an event id already committed, so it must publish nothing
  // and write nothing.
  const tenantId = offline.tenantId;
  const pool = buildPostgresPool(config, { max: 2 });
  const countRows = async () => {
    const res = await pool.query<{
      reflections: string;
      traces: string;
      processed: string;
      occurrences: string;
    }>(
      `SELECT (SELECT count(*) FROM reflections WHERE tenant_id = $1) AS reflections,
              (SELECT coalesce(sum(occurrences), 0) FROM reflections WHERE tenant_id = $1) AS occurrences,
              (SELECT count(*) FROM loop_traces WHERE tenant_id = $1) AS traces,
              (SELECT count(*) FROM processed_events WHERE tenant_id = $1) AS processed`,
      [tenantId],
    );
    return res.rows[0];
  };
  const before = await countRows();
  const valid = [...offline.rows.values()];
  for (const row of valid) {
    const value = await codec.encode(t.taskCompleted, "task-completed.v1", row.event);
    await producer.send({ topic: t.taskCompleted, messages: [{ key: row.event.loopId, value }] });
  }
  const duplicates = async () =>
    (await app.metrics.events.get()).values.find((v) => v.labels.result === "duplicate")?.value ?? 0;
  const replayDeadline = Date.now() + 60_000;
  while ((await duplicates()) < valid.length && Date.now() < replayDeadline)
    await new Promise((r) => setTimeout(r, 250));
  // Outputs of a record arrive right after its commit; give any stray one time to show up.
  await new Promise((r) => setTimeout(r, 2_000));
  const consumedAgain = await duplicates();
  const after = await countRows();
  await pool.end();

  console.log(`\n══ The offline generator (${app.generatorName}), tenant ${offline.tenantId} ══\n`);
  printResults(offline.rows.values(), offline.suffix);
  printLessons(offline.rows.values());
  printVerdicts(offline.rows.values());
  const offlineCounts = countVerdicts(offline.rows.values());
  console.log(
    `\nVerdicts of ${String(sum(offlineCounts.generated))} generated reflections (${app.generatorName}): ` +
      `${formatCounts(offlineCounts.generated)}; recalled lessons judged again ${String(sum(offlineCounts.recalled))} times: ` +
      formatCounts(offlineCounts.recalled),
  );
  console.log(
    "The offline generator states what the trace shows and claims no cause it cannot see: its lessons stay" +
      " below the depth `accepted` needs, and a failure whose cause it cannot see gets no lesson.",
  );
  console.log("\nDead letters:");
  for (const d of deadLetters) {
    console.log(`  ${d.example}: ${d.seen ? `${d.code} — ${truncate(d.reason, 100)}` : "(missing)"}`);
  }
  const replayClean =
    before?.reflections === after?.reflections &&
    before?.traces === after?.traces &&
    before?.processed === after?.processed &&
    before?.occurrences === after?.occurrences;
  console.log(
    `\nReplay: published ${String(valid.length)} events again (new records, same event ids): ${String(consumedAgain)} consumed as duplicates, ${String(replayed)} outputs published again; rows before/after: ` +
      `reflections ${before?.reflections}/${after?.reflections}, occurrences ${before?.occurrences}/${after?.occurrences}, ` +
      `loop traces ${before?.traces}/${after?.traces}, processed ${before?.processed}/${after?.processed} ` +
      `(${replayClean ? "no duplicates" : "DUPLICATES"})`,
  );

  console.log(
    `\n══ The openai generator on RECORDED ANSWERS REPLAYED (not a live model), tenant ${model.tenantId} ══\n`,
  );
  printResults(model.rows.values(), model.suffix);
  printLessons(model.rows.values());
  printVerdicts(model.rows.values());
  const modelCounts = countVerdicts(model.rows.values());
  const { answered, unrecorded } = recorded.server.counts();
  console.log(
    `\nVerdicts of ${String(sum(modelCounts.generated))} generated reflections (openai, recorded answers): ${formatCounts(modelCounts.generated)}; ` +
      `recalled lessons judged again ${String(sum(modelCounts.recalled))} times: ${formatCounts(modelCounts.recalled)}. ` +
      `Chat requests answered from recordings ${String(answered)}, without a recording ${String(unrecorded)}.`,
  );
  console.log(
    "A recalled lesson is judged again with the occurrences committed before it: two recurrences processed at" +
      " the same time on different partitions count the same ones.",
  );

  await viewer.disconnect();
  await producer.disconnect();
  await Promise.all([app.stop(), modelApp.stop()]);
  await recorded.server.close();
  const all = [offlineCounts, modelCounts].flatMap((c) => [c.generated, c.recalled]);
  const shown = (verdict: keyof VerdictCounts) => all.reduce((n, c) => n + c[verdict], 0);
  console.log(
    `\nVerdicts in the demo: accepted ${String(shown("accepted"))}, accepted_with_warnings ${String(shown("accepted_with_warnings"))}, rejected ${String(shown("rejected"))}`,
  );
  const ok = complete && replayClean && consumedAgain >= valid.length && replayed === 0;
  console.log(
    ok ? "\nDemo finished." : "\nDemo incomplete: some results did not arrive in time (see the log).",
  );
  return ok ? 0 : 1;
}

const sum = (counts: VerdictCounts) => counts.accepted + counts.accepted_with_warnings + counts.rejected;
