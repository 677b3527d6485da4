import type { Verdict } from "../../domain/contracts/index.js";
import type { AnswerEvaluation } from "../../domain/evaluation/answer-evaluation.js";
import { insightLines } from "../../domain/evaluation/adaptive-insights.js";
import { decideStorage } from "../../domain/memory/decide-storage.js";
import type { MemoryConfig } from "../../domain/memory/memory-config.js";
import { nearestSameLesson } from "../../domain/memory/same-lesson.js";
import { taskText } from "../../domain/memory/trace-text.js";
import { runImprovementLoop, type ImprovementLoopResult } from "../../domain/quality/improvement-loop.js";
import { improvementLoopSucceeded } from "../../domain/quality/loop-success.js";
import { screenReflection } from "../../domain/quality/lesson-screen.js";
import { withEpisode } from "../../domain/quality/pattern-validity.js";
import type { QualityConfig } from "../../domain/quality/quality-config.js";
import { traceFacts } from "../../domain/quality/trace-facts.js";
import { decideVerdict, type ValidationResult } from "../../domain/quality/validate-reflection.js";
import { createAttemptJudge, type CauseJudge } from "../judge-reflection.js";
import type {
  Embedder,
  LifecycleSubject,
  QualityObserver,
  ReflectionGenerator,
  ReflectionLifecycle,
  ReflectionStore,
} from "../ports.js";
import type { EventFacts, Judged, ReflectedState, RejudgedState } from "../processing-state.js";
import type { StageTimer } from "../stage-timer.js";

export interface ReflectDeps {
  store: Pick<ReflectionStore, "nearbyReflections" | "commonIssues" | "patternEvidence">;
  embedder: Embedder;
  generator: ReflectionGenerator;
  /** The generator that stands in when the spend gate routes the tenant's work offline. */
  spend?: { generator: ReflectionGenerator };
  /** The model judge; not asked when the spend gate routes the tenant's work offline. */
  causeJudge?: CauseJudge | null;
  observer?: QualityObserver;
  /** The reflection's named lifecycle, logged; absent: not logged. */
  lifecycle?: ReflectionLifecycle;
  timer: StageTimer;
  quality: QualityConfig;
  memory: MemoryConfig;
}

/**
 * Stage "reflect": for a trace no stored lesson fits, a new reflection, generated, judged and
 * improved, with what memory does with it (`judged`); null when a stored lesson was recalled.
 */
export async function reflect(deps: ReflectDeps, state: RejudgedState): Promise<ReflectedState> {
  if (state.matched.known) return { ...state, judged: null };
  const { facts, matched } = state;
  const { event, failingStep } = facts;
  const text = taskText(event, failingStep);
  const [vector] = await deps.timer.time("embed", () => deps.embedder.embed([text], event.tenantId));
  if (!vector) throw new Error("embedder returned no vector");
  const spend = (await state.route()) === "offline" ? deps.spend : undefined;
  const generator = spend?.generator ?? deps.generator;
  const causeJudge = spend ? null : (deps.causeJudge ?? null);
  const subject = subjectOf(event);
  deps.lifecycle?.generationStarted(subject, { outcome: event.outcome, eventCount: event.events.length });
  try {
    const judged = await deps.timer.time(
      "reflect",
      () =>
        generateAndJudge(deps, facts, { text, vector }, state.answerEvaluation, { generator, causeJudge }),
      {
        attributes: { "reflector.signature": matched.candidate.signature },
        outcome: (j) => ({ "reflector.verdict": j.verdict, "reflector.attempts": j.attempts }),
      },
    );
    return { ...state, judged };
  } catch (err) {
    deps.lifecycle?.generationFailed(subject, err);
    throw err;
  }
}

/** The event a lifecycle log line is about. */
export function subjectOf(event: LifecycleSubject): LifecycleSubject {
  return {
    tenantId: event.tenantId,
    projectId: event.projectId,
    eventId: event.eventId,
    loopId: event.loopId,
  };
}

/** Generate, judge and improve a reflection, then decide what memory keeps. */
async function generateAndJudge(
  deps: ReflectDeps,
  facts: EventFacts,
  task: { text: string; vector: number[] },
  answerEvaluation: AnswerEvaluation | null,
  { generator, causeJudge }: { generator: ReflectionGenerator; causeJudge: CauseJudge | null },
): Promise<Judged> {
  const { store, timer, quality, memory } = deps;
  const { event } = facts;
  const [neighbours, issues] = await timer.time("store-read", () =>
    Promise.all([store.nearbyReflections(event.tenantId, task.text, 50), store.commonIssues(event.tenantId)]),
  );
  const insights = insightLines(issues);
  const logAttempt = attemptLogger(deps, event);
  const judge = createAttemptJudge({
    tenantId: event.tenantId,
    trace: traceFacts(event),
    taskVector: task.vector,
    neighbours,
    patternEvidence: async (patterns) =>
      withEpisode(
        await store.patternEvidence(event.tenantId, patterns),
        patterns,
        facts.episode,
        quality.patternValidity.keywordMatchShare,
      ),
    embedder: deps.embedder,
    quality,
    sameLessonSimilarity: memory.mergeMinSimilarity,
    ...(causeJudge
      ? {
          gradeCause: (reflection) => timer.time("judge-model", () => causeJudge.grade(event, reflection)),
        }
      : {}),
  });
  const result = await runImprovementLoop({
    maxAttempts: quality.maxAttempts,
    generate: (attempt, feedback) =>
      timer.time("generate", () =>
        generator.generate({
          event,
          attempt,
          violations: feedback?.violations ?? [],
          missingFields: feedback?.missingFields ?? [],
          insights,
          answerEvaluation,
          located: facts.located,
        }),
      ),
    evaluate: (reflection) =>
      timer
        .time("judge", () => judge.evaluate(reflection), {
          outcome: (v) => ({ "reflector.quality_score": v.qualityScore }),
        })
        .then(logAttempt),
  });
  // The blamed call's action goes with the lesson, so a merge can tell calls apart.
  const action = facts.action;
  // Stored as judged: without the instructions the lesson screen refused.
  const kept = screenReflection(result.reflection).reflection;
  const attribution = kept.attribution;
  const reflection =
    action && attribution && attribution.stepIndex === facts.attribution?.stepIndex
      ? { ...kept, attribution: { ...attribution, action } }
      : kept;
  const judgement = judge.judgementOf(result.reflection);
  const verdict = decideVerdict(result.validation, quality);
  report(deps, event, result, verdict, generator.name);
  // The lesson it may merge into: the most similar stored one that blames the same failing step.
  const nearest = nearestSameLesson(
    { embedding: judgement.embedding, failingStep: reflection.attribution ?? null },
    neighbours.map((n) => ({ ...n, failingStep: n.failingStep ?? null })),
  );
  const storage = decideStorage(
    {
      verdict,
      qualityScore: result.validation.qualityScore,
      metrics: result.validation.metrics,
      missingFields: result.validation.missingFields,
      finding: facts.finding,
      nearest,
    },
    quality,
    memory,
  );
  return {
    reflection,
    generator: generator.name,
    validation: result.validation,
    verdict,
    attempts: result.attempts,
    embedding: judgement.embedding,
    storage,
  };
}

/** The judged reflection to the quality metrics and the lifecycle log. */
function report(
  deps: Pick<ReflectDeps, "observer" | "lifecycle" | "quality">,
  event: LifecycleSubject,
  result: ImprovementLoopResult,
  verdict: Verdict,
  generator: string,
): void {
  const succeeded = improvementLoopSucceeded(result.validation, deps.quality);
  deps.observer?.observe({ validation: result.validation, verdict, attempts: result.attempts, succeeded });
  deps.lifecycle?.generated(subjectOf(event), {
    reflection: result.reflection,
    attempts: result.attempts,
    maxAttempts: deps.quality.maxAttempts,
    validation: result.validation,
    verdict,
    succeeded,
    generator,
  });
}

/** Logs each judged attempt of the improvement loop, numbered from 1. */
function attemptLogger(deps: Pick<ReflectDeps, "lifecycle" | "quality">, event: LifecycleSubject) {
  let attempt = 0;
  return (validation: ValidationResult): ValidationResult => {
    attempt += 1;
    deps.lifecycle?.attemptJudged(subjectOf(event), {
      attempt,
      maxAttempts: deps.quality.maxAttempts,
      validation,
    });
    return validation;
  };
}
