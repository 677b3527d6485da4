import { z } from "zod";
import type { Reflection } from "../domain/contracts/index.js";
import { defaultQualityConfig, type QualityConfig } from "../domain/quality/quality-config.js";
import { decideVerdict, shouldStore } from "../domain/quality/validate-reflection.js";
import { judgeReflection } from "../pipeline/judge-reflection.js";
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
  }),
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
  };
}

export interface ScoreDeps {
  embedder: Embedder;
  /** With a tenant: pattern evidence and novelty from that tenant's stored reflections. */
  history: { tenantId: string; store: Pick<ReflectionStore, "patternEvidence" | "nearbyReflections"> } | null;
  quality?: QualityConfig;
}

/** The quality judgement of one reflection, offline unless a tenant's history is asked for. */
export async function scoreReflection(input: ScoreInput, deps: ScoreDeps) {
  const quality = deps.quality ?? defaultQualityConfig;
  const reflection = toReflection(input.reflection);
  const taskText = input.task
    ? [input.task.description, input.task.goal, input.task.query, input.task.error?.message]
        .filter(Boolean)
        .join("\n")
    : "";
  const [taskVector] = taskText ? await deps.embedder.embed([taskText]) : [null];
  const history = deps.history;
  const patternEvidence = history
    ? await history.store.patternEvidence(history.tenantId, reflection.patterns)
    : new Map<string, { occurrences: number; total: number }>();
  const neighbours = history ? await history.store.nearbyReflections(history.tenantId, taskText, 50) : [];
  const { validation } = await judgeReflection(
    { reflection, taskVector: taskVector ?? null, neighbours, patternEvidence },
    deps.embedder,
    quality,
  );
  const verdict = decideVerdict(validation, quality);
  const notes: string[] = [];
  if (!taskVector) notes.push("no task given: relevance not assessed (counted as 1)");
  if (!history)
    notes.push(
      "no --tenant given: patterns have no stored evidence (validity 0) and novelty is 1; pass --tenant to use stored history",
    );
  return {
    verdict,
    qualityScore: validation.qualityScore,
    isValid: validation.isValid,
    wouldStore: shouldStore(verdict, validation.qualityScore, quality),
    metrics: validation.metrics,
    violations: validation.violations,
    missingFields: validation.missingFields,
    invalidPatterns: validation.invalidPatterns,
    notes,
  };
}
