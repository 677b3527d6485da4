/**
 * Memory on real agent failure logs (see bench/real-logs/real-logs.ts for where they come from):
 * each source's failures, its tune part and its held-out part separately, go through Reflector's
 * own logic with default settings, the configured embedder and the offline generator, over
 * in-memory ports (no Kafka, Postgres or Redis: what is measured is what memory decides).
 *
 * Per source and part it reports:
 * - lessons per repeated task: the distinct stored lessons the failures of one task land on, over
 *   the tasks that failed more than once (a task's trials are the same request; τ-bench only);
 * - the most distinct tasks one stored lesson stands for (different tasks are unrelated here);
 * - distinct lesson texts against distinct failing tasks;
 * - τ-bench, offline: the tasks with a right lesson (one written about a write call the task's
 *   published expected actions do not contain, which the generator never sees) and the stored
 *   lessons that name no such call; `BENCH_VERBOSE=1` prints each lesson and what the judge said;
 * - the decisive step: the attribution's step against the published label, exact and within two;
 * - reuses: how many, how many cost a chat call (must be 0), and how many reused a lesson of the
 *   same task (the right one).
 *
 * Then the same on the failures a capable model's answer was recorded for
 * (test/fixtures/recorded-answers/real, 12 per source), with the `openai` generator against a local
 * OpenAI-compatible server replaying those answers as they were written: what memory does with
 * lessons that are each written for their failure, and how many chat calls that costs.
 */
import OpenAI from "openai";
import { createOpenAiGenerator } from "../src/adapters/llm/openai-generator.js";
import { buildLlm } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import type { ReflectionOutcome } from "../src/domain/contracts/index.js";
import { replayModel, startFakeOpenAiServer } from "../test/support/fake-openai-server.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { recordedAnswers } from "../test/support/recorded-answers.js";
import { loadRealFailures, realLogsDir, type RealFailure } from "./real-logs/real-logs.js";
import { report, type BenchResult } from "./support.js";

interface PartResult {
  source: string;
  split: string;
  failures: number;
  tasks: number;
  repeatedTasks: number;
  /** Repeated tasks on which at least one lesson was stored or reused. */
  repeatedWithLesson: number;
  lessonsPerRepeatedTask: number;
  maxTasksPerLesson: number;
  mixedLessons: number;
  distinctTexts: number;
  stored: number;
  labelled: number;
  stepExact: number;
  stepWithinTwo: number;
  reuses: number;
  reuseChatCalls: number;
  reusesRight: number;
  generatorCalls: number;
  /**
   * τ-bench: tasks on which a failure landed on a lesson written about one of that run's wrong
   * writes (a write call not among the task's expected actions), and lessons stored that name no
   * wrong write of the run they were written from (on a failure with none, any lesson).
   */
  tasksRightLesson: number;
  wrongLessons: number;
  /**
   * τ-bench: failures whose own lesson (written for it and stored, merged or matched, not reused)
   * names no wrong write of that run. A lesson is judged above by the run it was first written
   * from; a later run merged into it is counted here.
   */
  writtenWrong: number;
  /** Chat calls the model answered (the recorded-answers run only). */
  chatCalls: number | null;
  actions: Map<string, number>;
}

interface ModelUnderTest {
  generator: NonNullable<NonNullable<Parameters<typeof createOfflineProcessor>[1]>["generator"]>;
  chatCalls: () => number;
}

async function runPart(
  failures: RealFailure[],
  embedder: ReturnType<typeof buildLlm>["embedder"],
  memory: ReturnType<typeof loadConfig>["memory"],
  model?: ModelUnderTest,
): Promise<Omit<PartResult, "source" | "split">> {
  const fakeStore = createFakeStore();
  const processor = createOfflineProcessor(
    { store: fakeStore.store, index: createFakeIndex().index },
    { embedder, memory, ...(model ? { generator: model.generator } : {}) },
  );
  const chatBefore = model?.chatCalls() ?? 0;
  const lessonTasks = new Map<string, Set<string>>();
  const taskLessons = new Map<string, Set<string>>();
  const taskFailures = new Map<string, number>();
  const actions = new Map<string, number>();
  let labelled = 0;
  let stepExact = 0;
  let stepWithinTwo = 0;
  let reuses = 0;
  let reuseChatCalls = 0;
  let reusesRight = 0;
  let generatorCalls = 0;
  /** Per stored lesson: whether the run it was written from shows it names a wrong write. */
  const lessonRight = new Map<string, boolean>();
  let writtenWrong = 0;
  for (const failure of failures) {
    const chatsBefore = model?.chatCalls() ?? 0;
    const result = await processor.process(failure.event);
    const chats = (model?.chatCalls() ?? 0) - chatsBefore;
    generatorCalls += result.generatorCalls;
    const outcome = result.outputs.find((o) => o.role !== "loopDecision")?.value as
      ReflectionOutcome | undefined;
    if (!outcome) throw new Error(`no outcome for ${failure.id}`);
    const action = outcome.memory?.action ?? "none";
    if (process.env.BENCH_VERBOSE && lessonText(outcome) !== "")
      console.error(
        `${failure.id} ${action} ${outcome.verdict} stored=${String(outcome.stored)} ${outcome.notStoredReason ?? ""} ${outcome.violations.join(" | ").slice(0, 200)} :: ${lessonText(outcome).slice(0, 120)}`,
      );
    actions.set(action, (actions.get(action) ?? 0) + 1);
    taskFailures.set(failure.taskKey, (taskFailures.get(failure.taskKey) ?? 0) + 1);
    const id = outcome.stored || action === "reuse" ? outcome.reflectionId : null;
    const wrongWrites = failure.label.unexpectedWrites;
    const namesWrongWrite = wrongWrites?.includes(lessonCall(outcome.reflection.reflectionText) ?? -1);
    if (id && wrongWrites && !lessonRight.has(id) && lessonText(outcome) !== "")
      lessonRight.set(id, namesWrongWrite === true);
    if (id && wrongWrites && action !== "reuse" && lessonText(outcome) !== "" && !namesWrongWrite)
      writtenWrong += 1;
    if (id) {
      const tasks = lessonTasks.get(id) ?? new Set<string>();
      if (action === "reuse") {
        reuses += 1;
        reuseChatCalls += model ? chats : result.generatorCalls;
        if (tasks.has(failure.taskKey)) reusesRight += 1;
      }
      tasks.add(failure.taskKey);
      lessonTasks.set(id, tasks);
      const lessons = taskLessons.get(failure.taskKey) ?? new Set<string>();
      lessons.add(id);
      taskLessons.set(failure.taskKey, lessons);
    }
    const step = outcome.reflection.attribution?.stepIndex;
    if (failure.label.step !== undefined) {
      labelled += 1;
      if (step === failure.label.step) stepExact += 1;
      if (step !== undefined && Math.abs(step - failure.label.step) <= 2) stepWithinTwo += 1;
    }
  }
  const rightTasks = [...taskLessons]
    .filter(([, ids]) => [...ids].some((id) => lessonRight.get(id) === true))
    .map(([task]) => task);
  if (process.env.BENCH_VERBOSE && rightTasks.length > 0)
    console.error(`tasks with a right lesson: ${rightTasks.join(", ")}`);
  const tasksRightLesson = rightTasks.length;
  const wrongLessons = [...lessonRight.values()].filter((right) => !right).length;
  const repeated = [...taskFailures].filter(([, n]) => n > 1).map(([task]) => task);
  // A task none of whose failures got a lesson is not split over lessons: it is left out here
  // and counted apart (repeatedWithLesson).
  const lessonsOfRepeated = repeated.map((t) => taskLessons.get(t)?.size ?? 0).filter((n) => n > 0);
  const storedTexts = new Set(
    [...fakeStore.reflections.values()].map((r) =>
      r.reflection.learning !== "" ? r.reflection.learning : (r.reflection.strategyText ?? ""),
    ),
  );
  return {
    failures: failures.length,
    tasks: taskFailures.size,
    repeatedTasks: repeated.length,
    repeatedWithLesson: lessonsOfRepeated.length,
    lessonsPerRepeatedTask: lessonsOfRepeated.length
      ? lessonsOfRepeated.reduce((a, b) => a + b, 0) / lessonsOfRepeated.length
      : Number.NaN,
    maxTasksPerLesson: Math.max(0, ...[...lessonTasks.values()].map((s) => s.size)),
    mixedLessons: [...lessonTasks.values()].filter((s) => s.size > 1).length,
    distinctTexts: storedTexts.size,
    stored: fakeStore.reflections.size,
    labelled,
    stepExact,
    stepWithinTwo,
    reuses,
    reuseChatCalls,
    reusesRight,
    generatorCalls,
    tasksRightLesson,
    wrongLessons,
    writtenWrong,
    chatCalls: model ? model.chatCalls() - chatBefore : null,
    actions,
  };
}

const lessonText = (o: ReflectionOutcome) => o.reflection.learning || (o.reflection.strategyText ?? "");

/**
 * The call an offline lesson is about: the last `step N (step-N), \`tool\`` in what the trace
 * shows (a lesson about a later write names the first write, then the one it is about).
 */
function lessonCall(text: string): number | undefined {
  const shows = /What the trace shows: (.*?)(?: Evidence: |$)/s.exec(text)?.[1] ?? "";
  const calls = [...shows.matchAll(/step (\d+) \(step-\d+\), `/g)];
  const last = calls.at(-1)?.[1];
  return last === undefined ? undefined : Number(last);
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(0)} %` : "n/a");

function goalsMet(r: PartResult): boolean {
  const tau = r.source.startsWith("tau-bench");
  return [
    !tau || r.repeatedWithLesson === 0 || r.lessonsPerRepeatedTask <= 1.5,
    r.maxTasksPerLesson <= 4,
    r.distinctTexts >= r.tasks / 2,
    !tau || r.stepWithinTwo >= 0.6 * r.labelled,
    r.reuseChatCalls === 0,
    r.reuses === 0 || r.reusesRight >= 0.9 * r.reuses,
  ].every(Boolean);
}

function partLines(r: PartResult, verdict: string): string[] {
  const tau = r.source.startsWith("tau-bench");
  return [
    `${r.source} [${r.split}] ${String(r.failures)} failures of ${String(r.tasks)} tasks (${String(r.repeatedTasks)} failed more than once): ${verdict}`,
    `  memory actions ${[...r.actions].map(([a, n]) => `${a} ${String(n)}`).join(", ")}; lessons stored ${String(r.stored)}; generator calls ${String(r.generatorCalls)}${r.chatCalls === null ? "" : `; chat calls ${String(r.chatCalls)}`}`,
    `  lessons per repeated task ${Number.isNaN(r.lessonsPerRepeatedTask) ? "n/a" : r.lessonsPerRepeatedTask.toFixed(2)} (≤ 1.5) over the ${String(r.repeatedWithLesson)} of ${String(r.repeatedTasks)} with a lesson; most tasks under one lesson ${String(r.maxTasksPerLesson)} (≤ 4); lessons spanning > 1 task ${String(r.mixedLessons)}`,
    `  distinct lesson texts ${String(r.distinctTexts)} for ${String(r.tasks)} failing tasks (≥ half)`,
    ...(tau && r.chatCalls === null
      ? [
          `  tasks with a right lesson (about a write the task did not call for) ${String(r.tasksRightLesson)} of ${String(r.tasks)}; lessons naming no wrong write ${String(r.wrongLessons)} (failures whose own stored or merged lesson names none ${String(r.writtenWrong)})`,
        ]
      : []),
    `  decisive step: exact ${String(r.stepExact)}/${String(r.labelled)} = ${pct(r.stepExact, r.labelled)}, within two ${String(r.stepWithinTwo)}/${String(r.labelled)} = ${pct(r.stepWithinTwo, r.labelled)}${tau ? " (≥ 60 %)" : ""}`,
    `  reuses ${String(r.reuses)}: chat calls ${String(r.reuseChatCalls)} (0), right task ${String(r.reusesRight)}/${String(r.reuses)} (≥ 90 %)`,
  ];
}

/**
 * The failures a capable model's answer was recorded for, per source and part, with the `openai`
 * generator against the local server replaying those answers (as bench/llm.ts calls-recorded
 * does). Informational: the goals are the offline run's.
 */
async function recordedRun(
  all: RealFailure[],
  embedder: ReturnType<typeof buildLlm>["embedder"],
  memory: ReturnType<typeof loadConfig>["memory"],
  only: string | undefined,
): Promise<string[]> {
  const byId = new Map(all.map((f) => [f.id, f]));
  const recorded = recordedAnswers("real").flatMap((answer) => {
    const failure = byId.get(answer.id);
    return failure ? [{ failure, answer }] : [];
  });
  if (recorded.length === 0) return ["recorded model answers: none match these logs"];
  const fake = await startFakeOpenAiServer({
    chat: replayModel(recorded.map((r) => ({ event: r.failure.event, answer: r.answer }))),
  });
  try {
    const client = new OpenAI({ apiKey: "unused", baseURL: fake.url, maxRetries: 0 });
    const generator = createOpenAiGenerator({
      client,
      model: "bench-model",
      timeoutMs: 10_000,
      maxRetries: 0,
    });
    const model = { generator, chatCalls: () => fake.chatRequests().length };
    const lines = [
      `recorded model answers (${String(recorded.length)} failures, test/fixtures/recorded-answers/real; openai generator against a local server replaying them):`,
    ];
    const failures = recorded.map((r) => r.failure);
    for (const source of [...new Set(failures.map((f) => f.source))])
      for (const split of ["tune", "holdout"] as const) {
        if (only && only !== split) continue;
        const part = failures.filter((f) => f.source === source && f.split === split);
        if (part.length === 0) continue;
        const r = { source, split, ...(await runPart(part, embedder, memory, model)) };
        lines.push(...partLines(r, "recorded answers").map((l) => `  ${l}`));
      }
    return lines;
  } finally {
    await fake.close();
  }
}

export async function benchMemoryReal(): Promise<BenchResult> {
  const where = realLogsDir();
  if ("absent" in where)
    return {
      name: "Memory on real agent failure logs",
      lines: [where.absent],
      ratio: Number.NaN,
      goal: "",
      met: false,
    };
  const config = loadConfig(
    Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => k.startsWith("MEMORY_") || k.startsWith("REFLECTOR_EMBEDDING"),
      ),
    ),
  );
  const { embedder } = buildLlm(config);
  const all = loadRealFailures(where.dir);
  const sources = [...new Set(all.map((f) => f.source))];
  const only = process.env.BENCH_SPLIT;
  const results: PartResult[] = [];
  for (const source of sources)
    for (const split of ["tune", "holdout"] as const) {
      if (only && only !== split) continue;
      const part = all.filter((f) => f.source === source && f.split === split);
      if (part.length === 0) continue;
      results.push({ source, split, ...(await runPart(part, embedder, config.memory)) });
    }
  const lines = [
    `embedder ${embedder.name}, generator heuristic, reuse ≥ ${config.memory.reuseMinSimilarity.toFixed(2)}, merge ≥ ${config.memory.mergeMinSimilarity.toFixed(2)}`,
  ];
  let met = true;
  for (const r of results) {
    const ok = goalsMet(r);
    met &&= ok;
    lines.push(...partLines(r, ok ? "goals met" : "goals NOT met"));
  }
  lines.push(...(await recordedRun(all, embedder, config.memory, only)));
  return {
    name: "Memory on real agent failure logs (per source, tune and held-out)",
    lines,
    ratio: met ? 1 : 0,
    goal: "per source and part: ≤ 1.5 lessons per repeated task, ≤ 4 tasks per lesson, distinct texts ≥ half the tasks, τ-bench decisive step within two ≥ 60 %, 0 chat calls and ≥ 90 % right lessons on reuse",
    met,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchMemoryReal());
  process.exit(0);
}
