import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
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

const root = fileURLToPath(new URL("../../", import.meta.url));

interface Example {
  file: string;
  name: string;
  summary: string;
  events?: TaskCompleted[];
  raw?: string;
}

interface Row {
  order: number;
  example: string;
  step: number;
  event: TaskCompleted;
  outcome?: ReflectionOutcome;
  decision?: LoopDecision;
  expectsOutcome: boolean;
}

async function loadExamples(): Promise<Example[]> {
  const dir = `${root}examples/`;
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  return Promise.all(
    files.map(async (file) => ({
      file,
      ...(JSON.parse(await readFile(dir + file, "utf8")) as Omit<Example, "file">),
    })),
  );
}

/**
 * Fetches the default embedder's model (wherever Kafka runs, the model must be on this machine),
 * then starts Kafka and the schema registry with the project's script unless KAFKA_BROKERS points
 * elsewhere.
 */
function ensureLocalServices(): void {
  // Unset or empty (= unset, as in loadConfig) means the default, `static` (distilled from the model).
  const embeddings = process.env.REFLECTOR_EMBEDDINGS ?? "";
  if (["", "static", "local"].includes(embeddings) && !process.env.REFLECTOR_EMBEDDING_MODEL_DIR) {
    execFileSync("bash", [`${root}scripts/services.sh`, "models"], { stdio: "inherit" });
  }
  if (process.env.KAFKA_BROKERS) return;
  console.log("Starting local Kafka and schema registry (scripts/services.sh start)…");
  execFileSync("bash", [`${root}scripts/services.sh`, "start"], { stdio: "inherit" });
  const env = execFileSync("bash", [`${root}scripts/services.sh`, "env"], { encoding: "utf8" });
  for (const line of env.split("\n")) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match?.[1] && match[2] !== undefined) process.env[match[1]] = match[2];
  }
}

/** A Kafka message's headers as the client hands them over. */
type Headers = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

function headerString(headers: Headers | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return (Array.isArray(value) ? value[0] : value)?.toString();
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function printTable(headers: string[], rows: string[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(line(headers));
  console.log(widths.map((w) => "─".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

export async function runDemo(): Promise<number> {
  ensureLocalServices();
  const runId = randomUUID().slice(0, 8);
  const tenantId = `demo-${runId}`;
  const config = loadConfig({
    ...process.env,
    KAFKA_GROUP_ID: process.env.KAFKA_GROUP_ID ?? "reflector-demo",
    HTTP_PORT: process.env.HTTP_PORT ?? "0",
  });
  mkdirSync(`${root}.services`, { recursive: true });
  const logFile = `${root}.services/demo.log`;
  const logger = createLogger(process.env.LOG_LEVEL ?? "info", createWriteStream(logFile, { flags: "a" }));

  console.log(`Migrating ${withoutCredentials(config.databaseUrl)} …`);
  await migrateDatabase(config);
  const kafka = buildKafka(config, logger, "demo");
  await createTopics(config, kafka);

  const app = createApp(config, logger);
  await app.start();
  console.log(
    `Processor running (group ${config.kafka.groupId}, generator ${app.generatorName}, embedder ${app.embedderName}); logs in ${logFile}`,
  );

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

  const examples = await loadExamples();
  const rows = new Map<string, Row>();
  const deadLetters: { example: string; offset: string; code: string; reason: string; seen: boolean }[] = [];
  const decisions: string[] = [];
  let replayed = 0;

  const publish = async (example: Example, step: number, event: TaskCompleted) => {
    rows.set(event.eventId, {
      order: examples.indexOf(example) * 100 + step,
      example: example.name,
      step,
      event,
      expectsOutcome: selectForReflection(event, config.mode).reflect,
    });
    const value = await codec.encode(t.taskCompleted, "task-completed.v1", event);
    await producer.send({
      topic: t.taskCompleted,
      messages: [{ key: event.loopId, value, headers: { ce_id: event.eventId } }],
    });
  };
  const personalise = (event: TaskCompleted, loopId: string, rerunOf: string | undefined): TaskCompleted => ({
    ...event,
    eventId: `${event.eventId}-${runId}`,
    tenantId,
    loopId,
    ...(rerunOf ? { rerunOf } : {}),
  });
  const chainOf = new Map<string, { example: Example; step: number }>();

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
      if (value.tenantId !== tenantId || !value.sourceEventId) return;
      const row = rows.get(value.sourceEventId);
      if (!row) return;
      if (topic === t.loopDecision) {
        const decision = value as LoopDecision;
        if (row.decision) {
          replayed += 1;
          return;
        }
        row.decision = decision;
        decisions.push(decision.decision);
        const chain = chainOf.get(decision.loopId);
        const next = chain?.example.events?.[chain.step + 1];
        if (chain && next && decision.decision === "rerun" && decision.newLoopId) {
          chainOf.set(decision.newLoopId, { example: chain.example, step: chain.step + 1 });
          await publish(
            chain.example,
            chain.step + 1,
            personalise(next, decision.newLoopId, decision.loopId),
          );
        }
      } else {
        row.outcome = value as ReflectionOutcome;
      }
    },
  });

  console.log(`Publishing ${examples.length} examples as tenant ${tenantId} (${codec.format} values)…`);
  for (const example of examples) {
    if (example.raw !== undefined) {
      const [meta] = await producer.send({
        topic: t.taskCompleted,
        messages: [{ key: "malformed", value: example.raw }],
      });
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
    const loopId = `${first.loopId}-${runId}`;
    chainOf.set(loopId, { example, step: 0 });
    await publish(example, 0, personalise(first, loopId, undefined));
  }

  const done = () =>
    [...rows.values()].every((r) => r.decision && (!r.expectsOutcome || r.outcome)) &&
    deadLetters.every((d) => d.seen);
  const bar = new SingleBar(
    {
      format: "Waiting for Reflector  [{bar}] {value}/{total} results",
      noTTYOutput: true,
      notTTYSchedule: 2000,
    },
    Presets.shades_classic,
  );
  const total = () => rows.size + deadLetters.length;
  const received = () =>
    [...rows.values()].filter((r) => r.decision).length + deadLetters.filter((d) => d.seen).length;
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

  // Publish every valid event again, as a retrying producer or a DLQ replay would: each is a
  // second record of an event id already committed, so it must publish nothing and write nothing.
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
  const valid = [...rows.values()];
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

  console.log("");
  printTable(
    ["example", "outcome", "verdict (score)", "generator", "signature", "occ", "decision"],
    [...rows.values()]
      .sort((a, b) => a.order - b.order)
      .map((r) => [
        truncate(r.step ? `  └ rerun ${r.step}` : r.example, 34),
        r.event.outcome,
        r.outcome
          ? `${r.outcome.verdict} (${r.outcome.qualityScore.toFixed(2)})`
          : r.expectsOutcome
            ? "(missing)"
            : "not reflected",
        r.outcome?.generator ?? "",
        r.outcome?.signature ?? "",
        r.outcome ? String(r.outcome.occurrences) : "",
        r.decision
          ? `${r.decision.decision}${r.decision.newLoopId ? ` → ${r.decision.newLoopId.replace(`-${runId}`, "")}` : ""} (${r.decision.reason})`
          : "(missing)",
      ]),
  );
  console.log("\nLessons stored or recalled:");
  for (const r of [...rows.values()].sort((a, b) => a.order - b.order)) {
    if (!r.outcome || r.outcome.deduplicated || !r.outcome.stored) continue;
    const lesson = r.outcome.reflection.adjustments[0] ?? r.outcome.reflection.strategyText ?? "";
    console.log(`  ${r.outcome.signature}  ${truncate(lesson, 110)}`);
  }
  console.log("\nWhy (each warning, rejection or lesson not stored, with the judge's reasons):");
  for (const r of [...rows.values()].sort((a, b) => a.order - b.order)) {
    const o = r.outcome;
    if (!o || o.deduplicated || (o.verdict === "accepted" && o.stored)) continue;
    console.log(
      `  ${truncate(r.step ? `rerun ${r.step}` : r.example, 34)}: ${o.verdict}${o.stored ? "" : ", not stored"}`,
    );
    for (const v of o.violations) console.log(`    - ${truncate(v, 160)}`);
    if (o.notStoredReason) console.log(`    - not stored: ${truncate(o.notStoredReason, 160)}`);
  }
  // Verdicts of the reflections the generator wrote in this run; recalled lessons are
  // judged again as their evidence accrues, and counted apart.
  const generated = [...rows.values()].filter((r) => r.outcome && r.outcome.generator !== "reused");
  const share = (verdict: string) => generated.filter((r) => r.outcome?.verdict === verdict).length;
  console.log(
    `\nVerdicts of ${String(generated.length)} generated reflections (${app.generatorName}): ` +
      `accepted ${String(share("accepted"))}, accepted_with_warnings ${String(share("accepted_with_warnings"))}, ` +
      `rejected ${String(share("rejected"))}; stored ${String(generated.filter((r) => r.outcome?.stored).length)}`,
  );
  // What kept the others below `accepted` (every check passed), by the judge's own words.
  const shortOf = new Map<string, number>();
  for (const r of generated)
    if (r.outcome && r.outcome.verdict !== "accepted")
      for (const kind of new Set(r.outcome.violations.map((v) => /^[A-Za-z ]+/.exec(v)?.[0].trim() ?? v)))
        shortOf.set(kind, (shortOf.get(kind) ?? 0) + 1);
  if (shortOf.size > 0)
    console.log(
      `Short of accepted: ${[...shortOf].map(([kind, n]) => `${kind} ${String(n)}`).join(", ")}` +
        (app.generatorName === "heuristic"
          ? ". The offline generator states what the trace shows and claims no cause it cannot see, so its" +
            " lessons stay below the depth that `accepted` needs; a model that finds the cause in the trace" +
            " (OPENAI_API_KEY) is accepted once its patterns, if any, are confirmed: by the tenant's episodes, or by" +
            " the lesson's third occurrence."
          : ""),
    );
  const recalled = [...rows.values()].filter((r) => r.outcome?.generator === "reused");
  const nowAccepted = new Set(
    recalled.filter((r) => r.outcome?.verdict === "accepted").map((r) => r.outcome?.reflectionId),
  );
  console.log(
    `Lessons recalled ${String(recalled.length)} times; judged again with the tenant's episodes, ` +
      `${String(nowAccepted.size)} lesson(s) now accepted (their patterns evidenced)`,
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

  await viewer.disconnect();
  await producer.disconnect();
  await app.stop();
  const ok = complete && replayClean && consumedAgain >= valid.length && replayed === 0;
  console.log(
    ok ? "\nDemo finished." : "\nDemo incomplete: some results did not arrive in time (see the log).",
  );
  return ok ? 0 : 1;
}

/** The database URL without its user and password, for display. */
function withoutCredentials(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    url.username = "";
    url.password = "";
    return url.toString();
  } catch {
    return "(the configured database)";
  }
}
