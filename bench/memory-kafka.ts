/**
 * Memory as an operator runs it: every failed run of one public source (bench/real-logs/) in one
 * tenant, produced to the input topic and processed by the whole app over real Kafka, Postgres and
 * Redis, with default settings (the offline generator, the default embedder). One tenant per source,
 * sources one after another.
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npm run bench -- memory-kafka
 *   BENCH_SOURCES=tau-bench/airline,agentrx/tau-retail BENCH_HEURISTIC_PACKS=travel …  (a setting under study)
 *
 * Per source, from the published outcomes (accepted and rejected topics): lessons stored, failures
 * that got a lesson (stored, merged or reused), reuses and how many of them landed on a failure of a
 * task the lesson was already about (the right one: a task's trials are the same request), and the
 * widest lesson: the most distinct tasks one stored lesson stands for. Different tasks of these logs
 * are unrelated requests, so a lesson over many tasks is an over-merge. Events the app refuses go
 * to its dead-letter topic and are counted.
 */
import { createApp } from "../src/composition/app.js";
import type { ReflectionOutcome } from "../src/domain/contracts/index.js";
import { loadRealFailures, realLogsDir, sourceInfo, type RealFailure } from "./real-logs/real-logs.js";
import {
  benchSetup,
  brokerBatchBytes,
  cleanTenant,
  deleteTopics,
  produceEvents,
  report,
  silentLogger,
  startCounter,
  withDeadline,
  type BenchResult,
} from "./support.js";

interface SourceMemory {
  source: string;
  tuned: boolean;
  failures: number;
  tasks: number;
  deadLetters: number;
  /** Events over the broker's default 1 MB limit, which no producer could send. */
  tooLarge: number;
  /** New lessons (`add`); merges into a stored one (`update`, `noop`) are in `actions`. */
  stored: number;
  withLesson: number;
  reuses: number;
  reusesRight: number;
  widest: number;
  actions: Map<string, number>;
  seconds: number;
}

async function runSource(source: string, failures: RealFailure[]): Promise<SourceMemory> {
  // Default settings, but for the offline generator's domain packs when the run names them.
  const packs = process.env.BENCH_HEURISTIC_PACKS;
  const setup = await benchSetup("memory-kafka", 3, packs ? { REFLECTOR_HEURISTIC_PACKS: packs } : {});
  const { kafka, config, tenantId } = setup;
  const byEvent = new Map(failures.map((f) => [f.event.eventId, f]));
  const outcomes: ReflectionOutcome[] = [];
  const outputs = await startCounter(
    kafka,
    [config.topics.reflectionAccepted, config.topics.reflectionRejected, config.topics.deadLetter],
    (value) => {
      if (!value) return;
      const parsed = JSON.parse(value.toString()) as Partial<ReflectionOutcome>;
      if (typeof parsed.sourceEventId === "string") outcomes.push(parsed as ReflectionOutcome);
    },
  );
  // An event over the broker's default 1 MB limit could not be sent by any producer: left out, counted.
  const events = failures.map((f) => ({ ...f.event, tenantId }));
  const sendable = events.filter((e) => JSON.stringify(e).length < brokerBatchBytes);
  await produceEvents(kafka, config.topics.taskCompleted, sendable);
  const app = createApp(config, silentLogger);
  app.onCrash((err) => {
    console.error("reflector consumer crashed:", err);
    process.exit(2);
  });
  const started = performance.now();
  await app.start();
  // One message per event: its outcome, or its dead letter.
  await outputs.waitFor(sendable.length, 900_000);
  const seconds = (performance.now() - started) / 1000;
  await app.stop();
  await outputs.stop();
  await cleanTenant(tenantId);
  await deleteTopics(setup);

  const lessonTasks = new Map<string, Set<string>>();
  const actions = new Map<string, number>();
  let reuses = 0;
  let reusesRight = 0;
  let withLesson = 0;
  let stored = 0;
  for (const outcome of outcomes) {
    const failure = byEvent.get(outcome.sourceEventId);
    if (!failure) continue;
    const action = outcome.memory?.action ?? "none";
    actions.set(action, (actions.get(action) ?? 0) + 1);
    if (action === "add") stored += 1;
    const id = outcome.stored || action === "reuse" ? outcome.reflectionId : null;
    if (process.env.BENCH_VERBOSE)
      console.error(
        `${failure.id} ${action} stored=${String(outcome.stored)} ${outcome.reflectionId ?? "-"} ${outcome.signature} ${outcome.memory?.signatureLevel ?? ""} ${outcome.verdict} ${outcome.notStoredReason ?? ""}`,
      );
    if (!id) continue;
    withLesson += 1;
    const tasks = lessonTasks.get(id) ?? new Set<string>();
    if (action === "reuse") {
      reuses += 1;
      if (tasks.has(failure.taskKey)) reusesRight += 1;
    }
    tasks.add(failure.taskKey);
    lessonTasks.set(id, tasks);
  }
  return {
    source,
    tuned: sourceInfo(failures[0]?.source ?? "who-and-when/hand-crafted").tuned,
    failures: failures.length,
    tasks: new Set(failures.map((f) => f.taskKey)).size,
    deadLetters: sendable.length - outcomes.length,
    tooLarge: events.length - sendable.length,
    stored,
    withLesson,
    reuses,
    reusesRight,
    widest: Math.max(0, ...[...lessonTasks.values()].map((s) => s.size)),
    actions,
    seconds,
  };
}

export async function benchMemoryKafka(): Promise<BenchResult> {
  const logs = realLogsDir();
  if ("absent" in logs)
    return {
      name: "memory through Kafka, one tenant per source",
      lines: [`SKIPPED — ${logs.absent}`],
      ratio: Number.NaN,
      goal: "widest lesson ≤ 3 tasks on every source",
      met: false,
    };
  const bySource = new Map<string, RealFailure[]>();
  const only = process.env.BENCH_SOURCES?.split(",").filter(Boolean);
  for (const f of loadRealFailures(logs.dir))
    if (!only || only.includes(f.source)) bySource.set(f.source, [...(bySource.get(f.source) ?? []), f]);
  const lines: string[] = [];
  if (process.env.BENCH_HEURISTIC_PACKS)
    lines.push(`REFLECTOR_HEURISTIC_PACKS=${process.env.BENCH_HEURISTIC_PACKS}`);
  let widest = 0;
  let wrongReuses = 0;
  for (const [source, failures] of bySource) {
    const r = await withDeadline(`memory-kafka ${source}`, 1_200_000, () => runSource(source, failures));
    widest = Math.max(widest, r.widest);
    wrongReuses += r.reuses - r.reusesRight;
    lines.push(
      `${source.padEnd(34)} ${r.tuned ? "tuned   " : "held out"} failures ${String(r.failures)} (${String(r.tasks)} tasks, ${String(r.tooLarge)} over 1 MB, ${String(r.deadLetters)} dead letters)  ` +
        `stored ${String(r.stored)}  with a lesson ${String(r.withLesson)}  reuses ${String(r.reuses)} (right task ${String(r.reusesRight)})  ` +
        `widest lesson ${String(r.widest)} tasks  [${[...r.actions].map(([a, n]) => `${a} ${String(n)}`).join(", ")}]  ${r.seconds.toFixed(0)} s`,
    );
  }
  lines.push(
    `widest lesson over every source ${String(widest)} tasks; reuses on another task ${String(wrongReuses)}`,
  );
  return {
    name: "memory through Kafka, one tenant per source",
    lines,
    ratio: widest,
    goal: "widest lesson ≤ 3 tasks on every source",
    met: widest <= 3,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchMemoryKafka());
}
