import type { Reflection, TaskCompleted } from "../domain/contracts/index.js";
import type { CauseGrade } from "../domain/quality/cause-grade.js";
import { cosineSimilarity } from "../domain/embedding/hashing-embedding.js";
import { screenReflection } from "../domain/quality/lesson-screen.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import type { TraceFacts } from "../domain/quality/trace-facts.js";
import { validateReflection, type ValidationResult } from "../domain/quality/validate-reflection.js";
import type { Embedder, PatternEvidence } from "./ports.js";

/**
 * The model judge (`REFLECTOR_JUDGE=model`): reads whether an analysis of a failure states a cause
 * the trace bears out. Null when it has no usable answer: the offline reading of depth stands.
 */
export interface CauseJudge {
  grade(event: TaskCompleted, reflection: Reflection): Promise<CauseGrade | null>;
}

/** A stored reflection near the task, by its embedding (the id, when the caller knows it). */
export interface Neighbour {
  id?: string;
  embedding: number[];
}

export interface JudgeInput {
  reflection: Reflection;
  /**
   * What the judged task's trace holds (`traceFacts(event)`), which the analysis must be grounded
   * in; `textFacts(text)` when only a text describes the task; null when there is nothing.
   */
  trace: TraceFacts | null;
  /** Embedding of the task (what it was and where it failed); null when there is no task to compare. */
  taskVector: number[] | null;
  /** Embeddings of the tenant's stored reflections nearest to the task, for novelty. */
  neighbours: readonly Neighbour[];
  /** Stored evidence per pattern; the tenant's history, counted, never guessed. */
  patternEvidence: ReadonlyMap<string, PatternEvidence>;
  /**
   * Raw similarity at or above which a stored reflection is the same lesson as this one (an
   * earlier version of it, which memory merges rather than stores twice): such neighbours do not
   * count against novelty. Absent: every neighbour counts.
   */
  sameLessonSimilarity?: number;
  /** Whose lesson it is: a remote embedder charges the tenant for it. */
  tenantId?: string;
  /** The model judge's reading of the analysis, when one is configured (cause-grade.ts). */
  causeGrade?: CauseGrade | null;
}

export interface Judgement {
  validation: ValidationResult;
  /** Embedding of the whole reflection (analysis, strategy, learning), as stored. */
  embedding: number[];
  /** The most similar stored reflection, with its raw cosine similarity. */
  nearest: { id: string | undefined; similarity: number } | null;
}

/** The whole of a reflection's text that novelty and storage compare. */
export function reflectionBody(reflection: Reflection): string {
  return [reflection.reflectionText, reflection.strategyText, reflection.learning].filter(Boolean).join("\n");
}

/**
 * Puts an embedder's cosine similarity of an analysis and its task on the 0–1 scale the relevance
 * threshold assumes: its typical similarity of unrelated pairs maps to 0 and of plainly related
 * ones to 1. An analysis and a task description are different kinds of text, and embedders
 * compress such pairs differently (a sentence model rarely gives a relevant analysis more than
 * 0.6 against its task; feature hashing gives it 0.2–0.4), so a raw threshold would judge the
 * embedder, not the reflection. Novelty compares lessons with lessons, like with like, and uses
 * the raw similarity.
 */
export function calibratedSimilarity(raw: number, embedder: Pick<Embedder, "similarityScale">): number {
  const scale = embedder.similarityScale;
  if (!scale) return Math.min(1, Math.max(0, raw));
  return Math.min(1, Math.max(0, (raw - scale.unrelated) / (scale.related - scale.unrelated)));
}

/**
 * The quality judgement of one reflection (docs/specification.md#quality-metrics), shared by the
 * pipeline, dreaming and `reflector score`. Relevance compares the analysis (the root cause) with
 * the task; novelty compares the whole reflection with the tenant's stored ones. Without a task,
 * relevance is not assessed and counts as 1.
 */
export async function judgeReflection(
  input: JudgeInput,
  embedder: Embedder,
  quality: QualityConfig,
): Promise<Judgement> {
  // One call for both texts: a local model runs them as one batch, a remote one as one request.
  // The lesson is embedded as it is stored: without the instructions the screen refuses.
  const kept = screenReflection(input.reflection).reflection;
  const [embedding, analysisVector] = await embedder.embed(
    [reflectionBody(kept), kept.reflectionText],
    input.tenantId,
  );
  if (!embedding || !analysisVector) throw new Error("embedder returned no vector");
  const relevance = input.taskVector
    ? calibratedSimilarity(cosineSimilarity(analysisVector, input.taskVector), embedder)
    : 1;
  let nearest: Judgement["nearest"] = null;
  let maxOther = 0;
  for (const neighbour of input.neighbours) {
    if (neighbour.embedding.length !== embedding.length) continue;
    const similarity = cosineSimilarity(embedding, neighbour.embedding);
    if (!nearest || similarity > nearest.similarity) nearest = { id: neighbour.id, similarity };
    const sameLesson = input.sameLessonSimilarity !== undefined && similarity >= input.sameLessonSimilarity;
    if (!sameLesson) maxOther = Math.max(maxOther, similarity);
  }
  const validation = validateReflection(
    input.reflection,
    {
      patternEvidence: input.patternEvidence,
      relevance,
      novelty: 1 - maxOther,
      trace: input.trace,
      causeGrade: input.causeGrade ?? null,
    },
    quality,
  );
  return { validation, embedding, nearest };
}

/**
 * The `evaluate` step of the improvement loop, shared by the pipeline and dreaming: judges
 * each attempt against one task and neighbourhood, with the tenant's pattern evidence, and keeps
 * each attempt's judgement so the chosen one can be stored with its embedding.
 */
export function createAttemptJudge(options: {
  trace: TraceFacts | null;
  taskVector: number[] | null;
  neighbours: readonly Neighbour[];
  patternEvidence: (patterns: string[]) => Promise<ReadonlyMap<string, PatternEvidence>>;
  embedder: Embedder;
  quality: QualityConfig;
  sameLessonSimilarity?: number;
  tenantId?: string;
  /** The model judge, when configured: one request per judged attempt. */
  gradeCause?: (reflection: Reflection) => Promise<CauseGrade | null>;
}) {
  const judgements = new Map<Reflection, Judgement>();
  return {
    evaluate: async (reflection: Reflection): Promise<ValidationResult> => {
      const judgement = await judgeReflection(
        {
          reflection,
          trace: options.trace,
          taskVector: options.taskVector,
          neighbours: options.neighbours,
          patternEvidence: await options.patternEvidence(reflection.patterns),
          sameLessonSimilarity: options.sameLessonSimilarity,
          ...(options.tenantId !== undefined ? { tenantId: options.tenantId } : {}),
          causeGrade: options.gradeCause ? await options.gradeCause(reflection) : null,
        },
        options.embedder,
        options.quality,
      );
      judgements.set(reflection, judgement);
      return judgement.validation;
    },
    /** The judgement of an evaluated attempt (the improvement loop's pick). */
    judgementOf: (reflection: Reflection): Judgement => {
      const judgement = judgements.get(reflection);
      if (!judgement) throw new Error("best attempt was never evaluated");
      return judgement;
    },
    /** The embedding of an evaluated attempt. */
    embeddingOf: (reflection: Reflection): number[] => {
      const judgement = judgements.get(reflection);
      if (!judgement) throw new Error("best attempt was never evaluated");
      return judgement.embedding;
    },
  };
}
