/**
 * The judge against reflections on real agent failures, labelled by reading (`bench/judge-labels.json`).
 *
 * Items: a capable model's recorded answers to Reflector's exact generator prompts for a fixed
 * sample of public failure logs (Who&When, τ-bench airline; see bench/real-logs/), the deliberately
 * bad variants recorded with them (vague, symptom only, keyword-stuffed, blaming another step),
 * each model answer judged against another failure's trace (the wrong task), and the offline
 * generator's reflection on each failure. Each item is judged as the pipeline judges a new
 * reflection of a young tenant (the configured embedder, relevance against the task text, the
 * failure's own episode as pattern evidence, no stored lessons) and stored or not by the
 * pipeline's storage rules. Labels come from reading each item against its trace and the
 * annotators' label, never from the judge.
 *
 * Reported for the tuning and held-out parts separately: stored share of good items and of each
 * bad kind, the AUC of the quality score (good above bad), the same for the literal depth reading,
 * and the model calls a generator that answers `patterns: []` costs per new failure and for four
 * occurrences of one failure.
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npm run bench -- judge
 *
 * `REFLECTOR_RECORDED_ANSWERS_DIR` names another folder of recorded answers (default: the committed
 * `test/fixtures/recorded-answers/real`); `REFLECTOR_PROMPTS_DIR` the prompts they answer (default
 * `<logs>/prompts`; optional, for the parser's leak checks).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseReflectionOutput } from "../src/adapters/llm/reflection-output.js";
import { buildLlm } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import { attributeFailure } from "../src/domain/attribution/attribute-failure.js";
import type { Reflection, ReflectionOutcome, TaskCompleted } from "../src/domain/contracts/index.js";
import { generateHeuristicReflection } from "../src/domain/heuristic/generate-heuristic-reflection.js";
import { decideStorage } from "../src/domain/memory/decide-storage.js";
import { episodeText, taskText } from "../src/domain/memory/trace-text.js";
import type { CauseGrade } from "../src/domain/quality/cause-grade.js";
import { withEpisode } from "../src/domain/quality/pattern-validity.js";
import { defaultQualityConfig, type QualityConfig } from "../src/domain/quality/quality-config.js";
import { traceFacts } from "../src/domain/quality/trace-facts.js";
import { decideVerdict, validateReflection } from "../src/domain/quality/validate-reflection.js";
import { judgeReflection } from "../src/pipeline/judge-reflection.js";
import type { Embedder, ReflectionGenerator } from "../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { exampleEvent } from "../test/support/examples.js";
import { loadRealFailures, realLogsDir, type RealFailure } from "./real-logs/real-logs.js";
import { stepConsistency, stepRules, type StepConsistency } from "./step-consistency.js";
import { report, withDeadline, type BenchResult } from "./support.js";

/** Where the recorded answers are: one JSON file per prompt, named like the prompt file. */
export const recordedAnswersSetting = "REFLECTOR_RECORDED_ANSWERS_DIR";

export type ItemKind = "model" | "vague" | "symptom" | "keywords" | "wrong_step" | "wrong_task" | "offline";

export interface JudgeLabel {
  /** The failure's id; for `wrong_task`, "<answer's failure> -> <judged failure>". */
  id: string;
  kind: ItemKind;
  label: "good" | "bad";
  reason: string;
}

interface Recording {
  id: string;
  promptFile: string;
  content: string;
  variants?: Partial<Record<ItemKind, string>>;
}

interface Row {
  kind: ItemKind;
  label: "good" | "bad";
  split: "tune" | "holdout";
  qualityScore: number;
  stored: boolean;
  literalScore: number;
  literalStored: boolean;
  depthScore: number;
  /** The candidate check of bench/step-consistency.ts (measured, not applied by the judge). */
  step: StepConsistency | null;
}

const fileOf = (id: string) => `${id.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`;

/** An answer as the `openai` generator reads it; prose around a JSON object is cut off first. */
export function readAnswer(raw: string, promptDir: string, file: string, event: TaskCompleted): Reflection {
  // The request's secrets and system message, when the prompts are at hand, for the parser's leak
  // checks; without them the answer is read the same way, those checks aside.
  const promptFile = join(promptDir, file);
  const prompt = existsSync(promptFile)
    ? (JSON.parse(readFileSync(promptFile, "utf8")) as {
        secrets: { canary: string; nonce: string };
        messages: { content: string }[];
      })
    : { secrets: { canary: "no-canary-at-hand", nonce: "none" }, messages: [{ content: "" }] };
  const system = prompt.messages[0]?.content ?? "";
  const first = parseReflectionOutput(raw, prompt.secrets, system, event);
  if (first.ok) return first.reflection;
  const object = raw.slice(raw.indexOf("{"), raw.lastIndexOf("}") + 1);
  const second = parseReflectionOutput(object, prompt.secrets, system, event);
  if (second.ok) return second.reflection;
  throw new Error(`${file}: unreadable answer: ${second.problems.join("; ")}`);
}

/** Share of (good, bad) pairs the score orders right; ties count half. */
export function auc(good: readonly number[], bad: readonly number[]): number {
  if (good.length === 0 || bad.length === 0) return Number.NaN;
  let wins = 0;
  for (const g of good) for (const b of bad) wins += g > b ? 1 : g === b ? 0.5 : 0;
  return wins / (good.length * bad.length);
}

const pct = (part: number, whole: number) =>
  whole === 0 ? "—" : `${String(part)}/${String(whole)} = ${((100 * part) / whole).toFixed(0)} %`;

export async function judgeItem(
  reflection: Reflection,
  event: TaskCompleted,
  embedder: Embedder,
  quality: QualityConfig,
  literal: QualityConfig,
  mergeMinSimilarity: number,
  causeGrade: CauseGrade | null = null,
) {
  const stepIndex = attributeFailure(event)?.stepIndex;
  const failingStep = stepIndex === undefined ? undefined : event.events[stepIndex];
  const [taskVector] = await embedder.embed([taskText(event, failingStep)]);
  if (!taskVector) throw new Error("embedder returned no vector");
  const patternEvidence = withEpisode(
    new Map(),
    reflection.patterns,
    episodeText(event, failingStep),
    quality.patternValidity.keywordMatchShare,
  );
  const { validation } = await judgeReflection(
    {
      reflection,
      trace: traceFacts(event),
      taskVector,
      neighbours: [],
      patternEvidence,
      sameLessonSimilarity: mergeMinSimilarity,
      causeGrade,
    },
    embedder,
    quality,
  );
  const stored = (v: typeof validation, config = quality) =>
    decideStorage(
      {
        verdict: decideVerdict(v, config),
        qualityScore: v.qualityScore,
        metrics: v.metrics,
        missingFields: v.missingFields,
        finding: null,
        nearest: null,
      },
      config,
      { reuseMinSimilarity: 1, mergeMinSimilarity },
    ).action === "add";
  // The literal reading of the same reflection with the same relevance and novelty.
  const literalValidation = validateReflection(
    reflection,
    {
      patternEvidence,
      relevance: validation.metrics.relevanceScore,
      novelty: validation.metrics.noveltyScore,
    },
    literal,
  );
  if (process.env.BENCH_JUDGE_ITEMS)
    console.log(
      `  item score ${validation.qualityScore.toFixed(3)} stored ${String(stored(validation))} ${JSON.stringify(validation.metrics)} ${validation.violations.filter((v) => !v.startsWith("Unproven")).join(" | ")}`,
    );
  return {
    qualityScore: validation.qualityScore,
    depthScore: validation.metrics.depthScore,
    stored: stored(validation),
    literalScore: literalValidation.qualityScore,
    literalStored: stored(literalValidation, literal),
  };
}

/**
 * Model calls with a generator that answers `patterns: []` as the prompt allows: per new failure
 * (each good answer, as its own tenant's first failure), and for four occurrences of one failure.
 */
async function patternFreeCalls(
  goods: readonly { reflection: Reflection; event: TaskCompleted }[],
  example: { reflection: Reflection; event: TaskCompleted } | null,
  embedder: Embedder,
  quality: QualityConfig,
): Promise<string[]> {
  const lines: string[] = [];
  const run = async (answer: Reflection, events: TaskCompleted[]) => {
    let calls = 0;
    const generator: ReflectionGenerator = {
      name: "openai",
      generate: () => {
        calls += 1;
        return Promise.resolve({ ...answer, patterns: [] });
      },
    };
    const store = createFakeStore();
    const processor = createOfflineProcessor(
      { store: store.store, index: createFakeIndex().index },
      { generator, embedder, quality },
    );
    const verdicts: string[] = [];
    for (const event of events) {
      const { outputs } = await processor.process(event);
      const outcome = outputs.find((o) => o.role !== "loopDecision")?.value as
        Pick<ReflectionOutcome, "verdict"> | undefined;
      if (outcome) verdicts.push(outcome.verdict);
    }
    return { calls, stored: store.reflections.size, verdicts };
  };
  let calls = 0;
  let stored = 0;
  const verdicts = new Map<string, number>();
  for (const good of goods) {
    const result = await run(good.reflection, [good.event]);
    calls += result.calls;
    stored += result.stored;
    for (const verdict of result.verdicts) verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
  }
  lines.push(
    `patterns: [] — new failures (good answers): ${String(calls)} chat calls for ${String(goods.length)} failures (${(calls / Math.max(1, goods.length)).toFixed(2)} each), lessons stored ${pct(stored, goods.length)}; verdicts ${[
      ...verdicts,
    ]
      .map(([verdict, n]) => `${verdict} ${String(n)}`)
      .join(", ")}`,
  );
  if (example) {
    const occurrences = [0, 1, 2, 3].map((i) => ({
      ...example.event,
      eventId: `${example.event.eventId}-occurrence-${String(i)}`,
      loopId: `${example.event.loopId}-occurrence-${String(i)}`,
    }));
    const result = await run(example.reflection, occurrences);
    lines.push(
      `patterns: [] — 4 identical occurrences of example 01 (its recorded answer): ${String(result.calls)} chat call(s) in all, lessons stored ${String(result.stored)}; verdicts ${result.verdicts.join(", ")}`,
    );
  }
  return lines;
}

async function run(): Promise<BenchResult> {
  const name = "Judge against labelled reflections on real agent failures";
  const logs = realLogsDir();
  const committed = fileURLToPath(new URL("../test/fixtures/recorded-answers/real", import.meta.url));
  const recordedDir = process.env[recordedAnswersSetting] ?? (existsSync(committed) ? committed : undefined);
  const absent =
    "absent" in logs
      ? logs.absent
      : !recordedDir
        ? `${recordedAnswersSetting} is not set: it names the folder of recorded model answers (one JSON file per prompt of bench/real-logs/dump-prompts.ts).`
        : !existsSync(recordedDir)
          ? `${recordedAnswersSetting}=${recordedDir} does not exist`
          : null;
  if (absent || "absent" in logs || !recordedDir)
    return { name, lines: [`not run: ${absent ?? ""}`], ratio: 0, goal: "needs the real logs", met: false };
  const promptDir = process.env.REFLECTOR_PROMPTS_DIR ?? join(logs.dir, "prompts");

  // Default settings, unless the embedder or the judge's own settings are given to measure others.
  const measured = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        k.startsWith("REFLECTOR_EMBEDDING") ||
        k === "REFLECTOR_DEPTH_MODE" ||
        k.startsWith("MEMORY_") ||
        k === "STORAGE_MIN_QUALITY" ||
        k.startsWith("OPENAI_"),
    ),
  );
  const config = loadConfig(measured);
  const { embedder } = buildLlm(config);
  const quality: QualityConfig = {
    ...defaultQualityConfig,
    storageMinQuality: config.quality.storageMinQuality,
    depth: { ...defaultQualityConfig.depth, mode: config.quality.depthMode },
  };
  const literal: QualityConfig = { ...quality, depth: { ...quality.depth, mode: "literal" } };

  const failures = new Map<string, RealFailure>(loadRealFailures(logs.dir).map((f) => [f.id, f]));
  const labels = JSON.parse(
    readFileSync(new URL("./judge-labels.json", import.meta.url), "utf8"),
  ) as JudgeLabel[];
  const recordings = new Map<string, Recording>();
  const recording = (id: string): Recording => {
    let found = recordings.get(id);
    if (!found) {
      found = JSON.parse(readFileSync(join(recordedDir, fileOf(id)), "utf8")) as Recording;
      recordings.set(id, found);
    }
    return found;
  };
  const failure = (id: string): RealFailure => {
    const found = failures.get(id);
    if (!found) throw new Error(`no real failure ${id} under ${logs.dir}`);
    return found;
  };

  const rows: Row[] = [];
  const goodAnswers: { reflection: Reflection; event: TaskCompleted }[] = [];
  for (const item of labels) {
    const [answerId = item.id, judgedId = item.id] = item.id.split(" -> ");
    const origin = failure(answerId);
    const event = failure(judgedId).event;
    let reflection: Reflection;
    if (item.kind === "offline") reflection = generateHeuristicReflection(event);
    else {
      const rec = recording(answerId);
      const raw =
        item.kind === "model" || item.kind === "wrong_task" ? rec.content : rec.variants?.[item.kind];
      if (!raw) throw new Error(`${answerId}: no recorded ${item.kind} answer`);
      reflection = readAnswer(raw, promptDir, rec.promptFile, origin.event);
    }
    if (process.env.BENCH_JUDGE_ITEMS) console.log(`${item.kind} ${item.label} ${item.id}`);
    const judged = await judgeItem(
      reflection,
      event,
      embedder,
      quality,
      literal,
      config.memory.mergeMinSimilarity,
    );
    rows.push({
      kind: item.kind,
      label: item.label,
      split: origin.split,
      ...judged,
      step: stepConsistency(reflection, event),
    });
    if (item.kind === "model" && item.label === "good") goodAnswers.push({ reflection, event });
  }

  const lines: string[] = [
    `embedder ${embedder.name}; depth ${quality.depth.mode}; ${String(rows.length)} labelled items (${String(rows.filter((r) => r.label === "good").length)} good); storage bar ${String(quality.storageMinQuality)}`,
  ];
  const kinds: ItemKind[] = ["model", "vague", "symptom", "keywords", "wrong_step", "wrong_task", "offline"];
  const goals: { part: string; met: boolean }[] = [];
  for (const part of ["tune", "holdout", "all"] as const) {
    const of = rows.filter((r) => part === "all" || r.split === part);
    const good = of.filter((r) => r.label === "good");
    const bad = of.filter((r) => r.label === "bad");
    const perKind = (storedOf: (r: Row) => boolean) =>
      kinds
        .map((kind) => {
          const k = bad.filter((r) => r.kind === kind);
          return { kind, stored: k.filter(storedOf).length, n: k.length };
        })
        .filter((k) => k.n > 0);
    const line = (storedOf: (r: Row) => boolean, scoreOf: (r: Row) => number) =>
      `good stored ${pct(good.filter(storedOf).length, good.length)}; bad stored ${perKind(storedOf)
        .map((k) => `${k.kind} ${pct(k.stored, k.n)}`)
        .join(", ")}; AUC ${auc(good.map(scoreOf), bad.map(scoreOf)).toFixed(3)}`;
    lines.push(
      `${part}: ${line(
        (r) => r.stored,
        (r) => r.qualityScore,
      )}`,
      `${part} (literal reading, same items): ${line(
        (r) => r.literalStored,
        (r) => r.literalScore,
      )}`,
    );
    const a = auc(
      good.map((r) => r.qualityScore),
      bad.map((r) => r.qualityScore),
    );
    // What the candidate step checks would leave stored (BENCH_JUDGE_STEP_CHECK=1); the judge
    // does not apply them (docs/benchmarks.md#judge-on-real-failures says why).
    if (process.env.BENCH_JUDGE_STEP_CHECK && part !== "all")
      for (const [rule, keeps] of Object.entries(stepRules)) {
        const lost = good.filter((r) => r.stored && !keeps(r.step)).length;
        lines.push(
          `${part} with step check ${rule}: ${line(
            (r) => r.stored && keeps(r.step),
            (r) => r.qualityScore,
          )} (good lost ${String(lost)})`,
        );
      }
    if (part !== "all")
      goals.push({
        part,
        met:
          good.filter((r) => r.stored).length >= 0.9 * good.length &&
          perKind((r) => r.stored).every((k) => k.stored <= 0.1 * k.n) &&
          a >= 0.9,
      });
  }

  const exampleName = "examples_01-postgres-query-timeout_0.json";
  const exampleRecording = [
    join(recordedDir, exampleName),
    join(dirname(recordedDir), "examples", exampleName),
  ].find((file) => existsSync(file));
  let example: { reflection: Reflection; event: TaskCompleted } | null = null;
  if (exampleRecording) {
    const rec = JSON.parse(readFileSync(exampleRecording, "utf8")) as Recording;
    const event = exampleEvent("01");
    example = { event, reflection: readAnswer(rec.content, promptDir, rec.promptFile, event) };
  }
  lines.push(...(await patternFreeCalls(goodAnswers, example, embedder, quality)));

  const all = rows;
  const goodAll = all.filter((r) => r.label === "good");
  const storedShare = goodAll.filter((r) => r.stored).length / Math.max(1, goodAll.length);
  return {
    name,
    lines,
    ratio: storedShare,
    goal: "per part: good stored ≥ 0.90, every bad kind stored ≤ 0.10, AUC ≥ 0.90",
    met: goals.every((g) => g.met),
  };
}

export async function benchJudge(): Promise<BenchResult> {
  return withDeadline("judge", 900_000, run);
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchJudge());
  process.exit(0);
}
