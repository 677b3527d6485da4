import { randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { SingleBar, Presets } from "cli-progress";
import { createApp, type App } from "../composition/app.js";
import {
  buildCodec,
  buildKafka,
  buildPostgresPool,
  buildProducer,
  createTopics,
  migrateDatabase,
} from "../composition/builders.js";
import { loadConfig } from "../config/config.js";
import { createLogger } from "../observability/logger.js";
import { onOutput, publishPass, type DeadLetterRow, type Demo, type Pass } from "./demo-passes.js";
import {
  countVerdicts,
  formatCounts,
  printLessons,
  printResults,
  printVerdicts,
  truncate,
  type VerdictCounts,
} from "./demo-report.js";
import { ensureLocalServices, loadExamples, recordedPass, root, withoutCredentials } from "./demo-setup.js";

/** Waits, with a progress bar, until every row has its results and every dead letter came; false at the deadline. */
async function waitForResults(passes: Pass[], deadLetters: DeadLetterRow[]): Promise<boolean> {
  const rows = () => passes.flatMap((pass) => [...pass.rows.values()]);
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
  return done();
}

/**
 * Publishes every valid event of the offline pass again, as a retrying producer or a DLQ replay
 * would: each is a second record of an event id already committed, so it must publish nothing
 * and write nothing. Returns the tenant's row counts before and after, and the duplicates consumed.
 */
async function replayPass(demo: Demo, app: App, pass: Pass) {
  const t = demo.config.topics;
  const pool = buildPostgresPool(demo.config, { max: 2 });
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
      [pass.tenantId],
    );
    return res.rows[0];
  };
  const before = await countRows();
  const valid = [...pass.rows.values()];
  for (const row of valid) {
    const value = await demo.codec.encode(t.taskCompleted, "task-completed.v1", row.event);
    await demo.producer.send({ topic: t.taskCompleted, messages: [{ key: row.event.loopId, value }] });
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
  const clean =
    before?.reflections === after?.reflections &&
    before?.traces === after?.traces &&
    before?.processed === after?.processed &&
    before?.occurrences === after?.occurrences;
  return { before, after, published: valid.length, consumedAgain, clean };
}

/** The offline pass's tables, its dead letters and the replay's counts. */
function reportOffline(demo: Demo, app: App, offline: Pass, replay: Awaited<ReturnType<typeof replayPass>>) {
  const { before, after } = replay;
  console.log(`\n══ The offline generator (${app.generatorName}), tenant ${offline.tenantId} ══\n`);
  printResults(offline.rows.values(), offline.suffix);
  printLessons(offline.rows.values());
  printVerdicts(offline.rows.values());
  const counts = countVerdicts(offline.rows.values());
  console.log(
    `\nVerdicts of ${String(sum(counts.generated))} generated reflections (${app.generatorName}): ` +
      `${formatCounts(counts.generated)}; recalled lessons judged again ${String(sum(counts.recalled))} times: ` +
      formatCounts(counts.recalled),
  );
  console.log(
    "The offline generator states what the trace shows and claims no cause it cannot see: its lessons stay" +
      " below the depth `accepted` needs, and a failure whose cause it cannot see gets no lesson.",
  );
  console.log("\nDead letters:");
  for (const d of demo.deadLetters) {
    console.log(`  ${d.example}: ${d.seen ? `${d.code} — ${truncate(d.reason, 100)}` : "(missing)"}`);
  }
  console.log(
    `\nReplay: published ${String(replay.published)} events again (new records, same event ids): ${String(replay.consumedAgain)} consumed as duplicates, ${String(demo.replayed)} outputs published again; rows before/after: ` +
      `reflections ${before?.reflections}/${after?.reflections}, occurrences ${before?.occurrences}/${after?.occurrences}, ` +
      `loop traces ${before?.traces}/${after?.traces}, processed ${before?.processed}/${after?.processed} ` +
      `(${replay.clean ? "no duplicates" : "DUPLICATES"})`,
  );
  return counts;
}

/** The recorded-answers pass's tables and how its chat requests were answered. */
function reportRecorded(model: Pass, server: { counts(): { answered: number; unrecorded: number } }) {
  console.log(
    `\n══ The openai generator on RECORDED ANSWERS REPLAYED (not a live model), tenant ${model.tenantId} ══\n`,
  );
  printResults(model.rows.values(), model.suffix);
  printLessons(model.rows.values());
  printVerdicts(model.rows.values());
  const counts = countVerdicts(model.rows.values());
  const { answered, unrecorded } = server.counts();
  console.log(
    `\nVerdicts of ${String(sum(counts.generated))} generated reflections (openai, recorded answers): ${formatCounts(counts.generated)}; ` +
      `recalled lessons judged again ${String(sum(counts.recalled))} times: ${formatCounts(counts.recalled)}. ` +
      `Chat requests answered from recordings ${String(answered)}, without a recording ${String(unrecorded)}.`,
  );
  console.log(
    "A recalled lesson is judged again with the occurrences committed before it: two recurrences processed at" +
      " the same time on different partitions count the same ones.",
  );
  return counts;
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
  const demo: Demo = { config, codec, producer, examples, passes: new Map(), deadLetters: [], replayed: 0 };
  await viewer.run({ eachMessage: ({ topic, message }) => onOutput(demo, topic, message) });

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
  const offline = await publishPass(demo, `demo-${runId}`, runId, t.taskCompleted, examples);
  const model = await publishPass(
    demo,
    `demo-${runId}-recorded`,
    `${runId}-r`,
    recorded.config.topics.taskCompleted,
    recorded.chosen,
  );
  const complete = await waitForResults([offline, model], demo.deadLetters);
  const replay = await replayPass(demo, app, offline);
  const offlineCounts = reportOffline(demo, app, offline, replay);
  const modelCounts = reportRecorded(model, recorded.server);

  await viewer.disconnect();
  await producer.disconnect();
  await Promise.all([app.stop(), modelApp.stop()]);
  await recorded.server.close();
  const all = [offlineCounts, modelCounts].flatMap((c) => [c.generated, c.recalled]);
  const shown = (verdict: keyof VerdictCounts) => all.reduce((n, c) => n + c[verdict], 0);
  console.log(
    `\nVerdicts in the demo: accepted ${String(shown("accepted"))}, accepted_with_warnings ${String(shown("accepted_with_warnings"))}, rejected ${String(shown("rejected"))}`,
  );
  const ok = complete && replay.clean && replay.consumedAgain >= replay.published && demo.replayed === 0;
  console.log(
    ok ? "\nDemo finished." : "\nDemo incomplete: some results did not arrive in time (see the log).",
  );
  return ok ? 0 : 1;
}

const sum = (counts: VerdictCounts) => counts.accepted + counts.accepted_with_warnings + counts.rejected;
