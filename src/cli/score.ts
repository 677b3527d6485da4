import { z } from "zod";
import { attributeFailure } from "../domain/attribution/attribute-failure.js";
import { Attribution, TaskCompletedV1, type Reflection } from "../domain/contracts/index.js";
import { findingFromEvaluation } from "../domain/evaluation/reflection-from-evaluation.js";
import { decideStorage } from "../domain/memory/decide-storage.js";
import { defaultMemoryConfig, type MemoryConfig } from "../domain/memory/memory-config.js";
import { nearestSameLesson } from "../domain/memory/same-lesson.js";
import { episodeText, taskText as eventTaskText } from "../domain/memory/trace-text.js";
import { withEpisode } from "../domain/quality/pattern-validity.js";
import { defaultQualityConfig, type QualityConfig } from "../domain/quality/quality-config.js";
import { textFacts, traceFacts } from "../domain/quality/trace-facts.js";
import { decideVerdict } from "../domain/quality/validate-reflection.js";
import { qualityErrorsOf } from "../domain/quality/quality-errors.js";
import { judgeReflection, type CauseJudge } from "../pipeline/judge-reflection.js";
import type { Embedder, ReflectionStore } from "../pipeline/ports.js";

const text = z.string().optional();
const list = z.array(z.string()).optional();

/**
 * What `reflector score` reads. Field names are Reflector's or the quality rules' (`analysis`,
 * `patterns_identified`, `strategy_adjustments`); missing fields are scored as missing, not refused.
 */
export const ScoreInput = z.object({
  reflection: z.object({
    reflectionText: text,
    analysis: text,
    strategyText: z.string().nullable().optional(),
    learning: text,
    patterns: list,
    patterns_identified: list,
    adjustments: list,
    strategy_adjustments: list,
    importance: z.number().min(0).max(1).optional(),
    confidence: z.number().min(0).max(1).optional(),
    tags: list,
    errorCategory: z.string().nullable().optional(),
    /** As a model writes it: keys it does not know are left out (`"toolName": null`). */
    attribution: z
      .preprocess(
        (value) =>
          value && typeof value === "object"
            ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null))
            : value,
        Attribution,
      )
      .optional(),
  }),
  /**
   * The whole task event the reflection is about (an `agent.task.completed` value): the judge
   * then reads its trace exactly as the pipeline does. Without it, `task` is the only text the
   * analysis can be grounded in.
   */
  event: TaskCompletedV1.optional(),
  task: z
    .object({
      description: text,
      goal: text,
      query: text,
      error: z.object({ message: z.string() }).partial().optional(),
    })
    .optional(),
});
export type ScoreInput = z.infer<typeof ScoreInput>;

export function toReflection(input: ScoreInput["reflection"]): Reflection {
  return {
    reflectionText: input.reflectionText ?? input.analysis ?? "",
    strategyText: input.strategyText ?? null,
    importance: input.importance ?? 0.5,
    confidence: input.confidence ?? 0.5,
    tags: input.tags ?? [],
    errorCategory: input.errorCategory ?? null,
    patterns: input.patterns ?? input.patterns_identified ?? [],
    adjustments: input.adjustments ?? input.strategy_adjustments ?? [],
    learning: input.learning ?? "",
    ...(input.attribution ? { attribution: input.attribution } : {}),
  };
}

export interface ScoreDeps {
  embedder: Embedder;
  /** With a tenant: pattern evidence and novelty from that tenant's stored reflections. */
  history: { tenantId: string; store: Pick<ReflectionStore, "patternEvidence" | "nearbyReflections"> } | null;
  quality?: QualityConfig;
  memory?: MemoryConfig;
  /** The model judge (`REFLECTOR_JUDGE=model`), asked when the reflection is about a failed event. */
  causeJudge?: CauseJudge | null;
}

/**
 * The quality judgement of one reflection, offline unless a tenant's history is asked for, and
 * the pipeline's storage answer for it: the same judge, the same task text, the same storage
 * rules (`decideStorage`), so `wouldStore` is what the processor would do with this reflection.
 */
export async function scoreReflection(input: ScoreInput, deps: ScoreDeps) {
  const quality = deps.quality ?? defaultQualityConfig;
  const memory = deps.memory ?? defaultMemoryConfig;
  const reflection = toReflection(input.reflection);
  const event = input.event;
  const stepIndex = event ? attributeFailure(event)?.stepIndex : undefined;
  const failingStep = event && stepIndex !== undefined ? event.events[stepIndex] : undefined;
  const taskText = event
    ? eventTaskText(event, failingStep)
    : input.task
      ? [input.task.description, input.task.goal, input.task.query, input.task.error?.message]
          .filter(Boolean)
          .join("\n")
      : "";
  const [taskVector] = taskText ? await deps.embedder.embed([taskText]) : [null];
  const history = deps.history;
  const stored = history
    ? await history.store.patternEvidence(history.tenantId, reflection.patterns)
    : new Map<string, { occurrences: number; total: number }>();
  const patternEvidence = event
    ? withEpisode(
        stored,
        reflection.patterns,
        episodeText(event, failingStep),
        quality.patternValidity.keywordMatchShare,
      )
    : stored;
  const neighbours = history ? await history.store.nearbyReflections(history.tenantId, taskText, 50) : [];
  const { validation, embedding } = await judgeReflection(
    {
      reflection,
      trace: event ? traceFacts(event) : taskText ? textFacts(taskText) : null,
      taskVector: taskVector ?? null,
      neighbours,
      patternEvidence,
      sameLessonSimilarity: memory.mergeMinSimilarity,
      causeGrade: event && deps.causeJudge ? await deps.causeJudge.grade(event, reflection) : null,
    },
    deps.embedder,
    quality,
  );
  const verdict = decideVerdict(validation, quality);
  const nearest = nearestSameLesson(
    { embedding, failingStep: reflection.attribution ?? null },
    neighbours.map((n) => ({ ...n, failingStep: n.failingStep ?? null })),
  );
  const storage = decideStorage(
    {
      verdict,
      qualityScore: validation.qualityScore,
      metrics: validation.metrics,
      missingFields: validation.missingFields,
      finding: event ? findingFromEvaluation(event) : null,
      nearest,
    },
    quality,
    memory,
  );
  const notes: string[] = [];
  if (!taskVector) notes.push("no task given: relevance not assessed (counted as 1)");
  if (!event && quality.depth.mode === "grounded")
    notes.push(
      "no event given: the analysis is grounded only in the task text; pass the task event (`event`) to judge it against its trace",
    );
  if (!history)
    notes.push(
      "no --tenant given: patterns have no stored evidence (unproven hypotheses) and novelty is 1; pass --tenant to use stored history",
    );
  return {
    verdict,
    qualityScore: validation.qualityScore,
    isValid: validation.isValid,
    wouldStore: storage.action === "add" || storage.action === "update" || storage.action === "noop",
    storage,
    metrics: validation.metrics,
    violations: validation.violations,
    /** The quality exception class of each violation (quality-errors.ts), in the same order. */
    errors: qualityErrorsOf(validation).map((error) => error.name),
    missingFields: validation.missingFields,
    invalidPatterns: validation.invalidPatterns,
    /** Whether asking again could fix it: a quarantined lesson, or one the rules keep, is final. */
    retryable: validation.retryable,
    notes,
  };
}
