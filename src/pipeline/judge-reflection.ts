import type { Reflection } from "../domain/contracts/index.js";
import { cosineSimilarity } from "../domain/embedding/hashing-embedding.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import { validateReflection, type ValidationResult } from "../domain/quality/validate-reflection.js";
import type { Embedder, PatternEvidence } from "./ports.js";

export interface JudgeInput {
  reflection: Reflection;
  /** Embedding of the task (what it was and where it failed); null when there is no task to compare. */
  taskVector: number[] | null;
  /** Embeddings of the tenant's stored reflections nearest to the task, for novelty. */
  neighbours: number[][];
  /** Stored evidence per pattern; the tenant's history, counted, never guessed. */
  patternEvidence: ReadonlyMap<string, PatternEvidence>;
}

export interface Judgement {
  validation: ValidationResult;
  /** Embedding of the whole reflection (analysis, strategy, learning), as stored. */
  embedding: number[];
}

/** The whole of a reflection's text that novelty and storage compare. */
export function reflectionBody(reflection: Reflection): string {
  return [reflection.reflectionText, reflection.strategyText, reflection.learning].filter(Boolean).join("\n");
}

/**
 * RT-010 judgement of one reflection, shared by the pipeline and `reflector score`. Relevance
 * compares the analysis (the root cause) with the task; novelty compares the whole reflection
 * with the tenant's stored ones. Without a task, relevance is not assessed and counts as 1.
 */
export async function judgeReflection(
  input: JudgeInput,
  embedder: Embedder,
  quality: QualityConfig,
): Promise<Judgement> {
  const [embedding, analysisVector] = await embedder.embed([
    reflectionBody(input.reflection),
    input.reflection.reflectionText,
  ]);
  if (!embedding || !analysisVector) throw new Error("embedder returned no vector");
  const relevance = input.taskVector ? Math.max(0, cosineSimilarity(analysisVector, input.taskVector)) : 1;
  const maxSimilarity = input.neighbours.reduce(
    (max, other) => Math.max(max, cosineSimilarity(embedding, other)),
    0,
  );
  const validation = validateReflection(
    input.reflection,
    { patternEvidence: input.patternEvidence, relevance, novelty: 1 - maxSimilarity },
    quality,
  );
  return { validation, embedding };
}

/**
 * The `evaluate` step of RT-010's improvement loop, shared by the pipeline and dreaming: judges
 * each attempt against one task and neighbourhood, with the tenant's pattern evidence, and keeps
 * each attempt's embedding so the chosen one can be stored with it.
 */
export function createAttemptJudge(options: {
  taskVector: number[] | null;
  neighbours: number[][];
  patternEvidence: (patterns: string[]) => Promise<ReadonlyMap<string, PatternEvidence>>;
  embedder: Embedder;
  quality: QualityConfig;
}) {
  const embeddings = new Map<Reflection, number[]>();
  return {
    evaluate: async (reflection: Reflection): Promise<ValidationResult> => {
      const judgement = await judgeReflection(
        {
          reflection,
          taskVector: options.taskVector,
          neighbours: options.neighbours,
          patternEvidence: await options.patternEvidence(reflection.patterns),
        },
        options.embedder,
        options.quality,
      );
      embeddings.set(reflection, judgement.embedding);
      return judgement.validation;
    },
    /** The embedding of an evaluated attempt (the improvement loop's pick). */
    embeddingOf: (reflection: Reflection): number[] => {
      const embedding = embeddings.get(reflection);
      if (!embedding) throw new Error("best attempt was never evaluated");
      return embedding;
    },
  };
}
