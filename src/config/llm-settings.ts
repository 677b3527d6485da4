import { existsSync } from "node:fs";
import { heuristicPackNames, type HeuristicPackName } from "../domain/heuristic/packs/heuristic-packs.js";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  defaultModelName,
  isModelName,
  modelNames,
  type ModelName,
} from "../domain/embedding/model-profiles.js";

/**
 * The settings of the language model and of the embeddings: their environment variables, their
 * part of `Config` and their checks. `config.ts` spreads them into the one schema.
 */

const optionalUrl = z.url().optional();

/**
 * Where `scripts/services.sh models` puts the local embedding model: under the package root (two
 * levels above this file in src/ and in dist/ alike), so the default holds whatever the cwd.
 */
export const defaultEmbeddingModelDir = fileURLToPath(
  new URL("../../.services/models/all-minilm-l6-v2", import.meta.url),
);

/** Where `scripts/services.sh models <name>` puts the local model `name`. */
export function embeddingModelDirOf(name: ModelName): string {
  return fileURLToPath(new URL(`../../.services/models/${name}`, import.meta.url));
}

export const llmEnv = {
  REFLECTOR_GENERATOR: z.enum(["heuristic", "openai"]).default("heuristic"),
  /** Domain packs of the offline generator's checks, comma-separated (`travel`); none by default. */
  REFLECTOR_HEURISTIC_PACKS: z
    .string()
    .default("")
    .transform((raw) =>
      raw
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(heuristicPackNames as [HeuristicPackName, ...HeuristicPackName[]]))),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: optionalUrl,
  REFLECTOR_MODEL: z.string().min(1).optional(),
  OPENAI_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  LLM_CIRCUIT_FAILURE_THRESHOLD: z.coerce.number().int().min(1).max(1000).default(5),
  LLM_CIRCUIT_OPEN_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  LLM_INPUT_PRICE_PER_MTOK_USD: z.coerce.number().min(0).default(0),
  LLM_OUTPUT_PRICE_PER_MTOK_USD: z.coerce.number().min(0).default(0),
  /** Upper bound on the estimated tokens of one generator request (src/adapters/llm/token-estimate.ts). */
  LLM_PROMPT_MAX_TOKENS: z.coerce.number().int().min(3_000).max(1_000_000).default(16_000),
  /** The most tokens a model may answer with (`max_completion_tokens` of every chat request). */
  LLM_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(256).max(100_000).default(2_000),
  /**
   * `static`: the local model's token vectors, distilled once by `npm run models` (meaning at the
   * cost of a lookup); `local`: the sentence-embedding model itself on the CPU; `openai`: an
   * embeddings endpoint; `hashing`: the lexical fallback (words, not meaning).
   */
  REFLECTOR_EMBEDDINGS: z.enum(["static", "local", "openai", "hashing"]).default("static"),
  REFLECTOR_EMBEDDING_MODEL: z.string().min(1).optional(),
  /** Directory of the local model (model.onnx, tokenizer.json); unset = defaultEmbeddingModelDir. */
  REFLECTOR_EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  REFLECTOR_EVALUATOR_MODEL: z.string().min(1).optional(),
  /**
   * `max_completion_tokens` of each answer self-evaluation request: its scores and a few short
   * issues need far less than a reflection (the specification's cap: 500).
   */
  REFLECTOR_EVALUATOR_MAX_TOKENS: z.coerce.number().int().min(100).max(100_000).default(500),
  /**
   * How "lessons for a task" chooses: `meaning` (the default), by the embedder's relevance and the
   * rare words the tasks share; `model`, a model reads the nearest lessons and says which apply
   * (one chat request per call; meaning alone when it gives no usable answer).
   */
  LESSONS_FOR_TASK_CHECK: z.enum(["meaning", "model"]).default("meaning"),
  /**
   * Who reads whether an analysis states a cause of the failure: `offline` (the default), the
   * quality rules' reading of the trace's specifics beside cause words; `model`, a model grades the
   * analysis against the trace (one more chat request per judged attempt of a failure; the offline
   * reading when it gives no usable answer).
   */
  REFLECTOR_JUDGE: z.enum(["offline", "model"]).default("offline"),
  /** The model of that judge; defaults to `REFLECTOR_MODEL`. */
  REFLECTOR_JUDGE_MODEL: z.string().min(1).optional(),
  /** The model of that check; defaults to `REFLECTOR_MODEL`. */
  REFLECTOR_LESSON_CHECK_MODEL: z.string().min(1).optional(),
  /** The longest an agent waits for that check (slot and request); then meaning answers. */
  LESSONS_FOR_TASK_CHECK_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** How many of the nearest lessons the model is asked about (more: more tokens per call). */
  LESSONS_FOR_TASK_CHECK_CANDIDATES: z.coerce.number().int().min(1).max(50).default(8),
  /** Requests of that check in flight at once, in slots of its own (not the pipeline's). */
  LESSONS_FOR_TASK_CHECK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** Checks that may wait for one of those slots; beyond that, meaning answers at once. */
  LESSONS_FOR_TASK_CHECK_QUEUE: z.coerce.number().int().min(0).max(10_000).default(16),
  /**
   * Failures a lesson must stand for before lessons for a task serve it to other tasks: 2 serves
   * a lesson one trace wrote only after a second failure was filed under it.
   */
  LESSONS_SERVE_MIN_OCCURRENCES: z.coerce.number().int().min(1).max(1_000).default(1),
};

type LlmEnv = z.infer<z.ZodObject<typeof llmEnv>>;

export interface LlmConfig {
  generator: LlmEnv["REFLECTOR_GENERATOR"];
  /** The offline generator's domain packs (REFLECTOR_HEURISTIC_PACKS). */
  heuristicPacks: readonly HeuristicPackName[];
  openai: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    model: string | undefined;
    timeoutMs: number;
    maxRetries: number;
    /** LLM circuit breaker (src/adapters/llm/circuit-breaker.ts). */
    circuitFailureThreshold: number;
    circuitOpenMs: number;
    embeddingModel: string | undefined;
    /** Model of the answer self-evaluation (a lighter one is fine); defaults to `model`. */
    evaluatorModel: string | undefined;
    /** `max_completion_tokens` of each answer self-evaluation request (`REFLECTOR_EVALUATOR_MAX_TOKENS`). */
    evaluatorMaxTokens: number;
    /** Model of the lessons-for-task check; defaults to `model`. */
    lessonCheckModel: string | undefined;
    /** Model of the model judge (`REFLECTOR_JUDGE=model`); defaults to `model`. */
    judgeModel: string | undefined;
    /** USD per million tokens; 0 = unpriced (cost metrics stay 0). */
    inputPricePerMTokUsd: number;
    outputPricePerMTokUsd: number;
    /** Budget of one generator request in estimated tokens (system + user, repair included). */
    promptMaxTokens: number;
    /** `max_completion_tokens` of every chat request: what one answer may cost at most. */
    maxOutputTokens: number;
  };
  embeddings: LlmEnv["REFLECTOR_EMBEDDINGS"];
  /** Who reads whether an analysis states a cause (`REFLECTOR_JUDGE`). */
  judge: LlmEnv["REFLECTOR_JUDGE"];
  /** How "lessons for a task" chooses (`LESSONS_FOR_TASK_CHECK`). */
  lessonCheck: LlmEnv["LESSONS_FOR_TASK_CHECK"];
  /** How long an agent waits for the model's check (`LESSONS_FOR_TASK_CHECK_TIMEOUT_MS`). */
  lessonCheckTimeoutMs: number;
  /** How many of the nearest lessons the model is asked about (`LESSONS_FOR_TASK_CHECK_CANDIDATES`). */
  lessonCheckCandidates: number;
  /** The check's own slots and queue (`LESSONS_FOR_TASK_CHECK_CONCURRENCY`, `…_QUEUE`). */
  lessonCheckConcurrency: number;
  lessonCheckQueue: number;
  /** LESSONS_SERVE_MIN_OCCURRENCES: failures a lesson stands for before it is served to other tasks. */
  lessonServeMinOccurrences: number;
  /** The local model's directory, absolute (used when `embeddings` is `static` or `local`). */
  embeddingModelDir: string;
  /**
   * The local model's profile (REFLECTOR_EMBEDDING_MODEL when `embeddings` is `local`, default
   * all-minilm-l6-v2): its pooling and prefixes (src/domain/embedding/model-profiles.ts).
   */
  localEmbeddingModel: ModelName;
}

export function llmConfigOf(e: LlmEnv): LlmConfig {
  const named = e.REFLECTOR_EMBEDDINGS === "local" ? e.REFLECTOR_EMBEDDING_MODEL : undefined;
  // Refused by llmProblems before a config is made; the default stands for a name it never sees.
  const localEmbeddingModel = named !== undefined && isModelName(named) ? named : defaultModelName;
  return {
    generator: e.REFLECTOR_GENERATOR,
    heuristicPacks: e.REFLECTOR_HEURISTIC_PACKS,
    openai: {
      apiKey: e.OPENAI_API_KEY,
      baseUrl: e.OPENAI_BASE_URL,
      model: e.REFLECTOR_MODEL,
      timeoutMs: e.OPENAI_TIMEOUT_MS,
      maxRetries: e.OPENAI_MAX_RETRIES,
      circuitFailureThreshold: e.LLM_CIRCUIT_FAILURE_THRESHOLD,
      circuitOpenMs: e.LLM_CIRCUIT_OPEN_MS,
      embeddingModel: e.REFLECTOR_EMBEDDING_MODEL,
      evaluatorModel: e.REFLECTOR_EVALUATOR_MODEL,
      evaluatorMaxTokens: e.REFLECTOR_EVALUATOR_MAX_TOKENS,
      lessonCheckModel: e.REFLECTOR_LESSON_CHECK_MODEL,
      judgeModel: e.REFLECTOR_JUDGE_MODEL,
      inputPricePerMTokUsd: e.LLM_INPUT_PRICE_PER_MTOK_USD,
      outputPricePerMTokUsd: e.LLM_OUTPUT_PRICE_PER_MTOK_USD,
      promptMaxTokens: e.LLM_PROMPT_MAX_TOKENS,
      maxOutputTokens: e.LLM_MAX_OUTPUT_TOKENS,
    },
    embeddings: e.REFLECTOR_EMBEDDINGS,
    judge: e.REFLECTOR_JUDGE,
    lessonCheck: e.LESSONS_FOR_TASK_CHECK,
    lessonCheckTimeoutMs: e.LESSONS_FOR_TASK_CHECK_TIMEOUT_MS,
    lessonCheckCandidates: e.LESSONS_FOR_TASK_CHECK_CANDIDATES,
    lessonCheckConcurrency: e.LESSONS_FOR_TASK_CHECK_CONCURRENCY,
    lessonCheckQueue: e.LESSONS_FOR_TASK_CHECK_QUEUE,
    lessonServeMinOccurrences: e.LESSONS_SERVE_MIN_OCCURRENCES,
    embeddingModelDir: e.REFLECTOR_EMBEDDING_MODEL_DIR
      ? resolve(e.REFLECTOR_EMBEDDING_MODEL_DIR)
      : localEmbeddingModel === defaultModelName
        ? defaultEmbeddingModelDir
        : embeddingModelDirOf(localEmbeddingModel),
    localEmbeddingModel,
  };
}

/** The model settings that only make sense together; checked on the raw values so every problem is listed. */
export function llmProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const endpoint = env.OPENAI_BASE_URL !== undefined || env.OPENAI_API_KEY !== undefined;
  if (env.REFLECTOR_GENERATOR === "openai") {
    if (!endpoint) {
      problems.push("OPENAI_BASE_URL: REFLECTOR_GENERATOR=openai needs OPENAI_BASE_URL or OPENAI_API_KEY");
    }
    if (env.REFLECTOR_MODEL === undefined) {
      problems.push("REFLECTOR_MODEL: REFLECTOR_GENERATOR=openai needs a model name");
    }
  }
  if (env.REFLECTOR_EMBEDDINGS === "openai") {
    if (!endpoint) {
      problems.push("OPENAI_BASE_URL: REFLECTOR_EMBEDDINGS=openai needs OPENAI_BASE_URL or OPENAI_API_KEY");
    }
    if (env.REFLECTOR_EMBEDDING_MODEL === undefined) {
      problems.push("REFLECTOR_EMBEDDING_MODEL: REFLECTOR_EMBEDDINGS=openai needs an embedding model name");
    }
  }
  const localModel = env.REFLECTOR_EMBEDDING_MODEL;
  if (env.REFLECTOR_EMBEDDINGS === "local" && localModel !== undefined && !isModelName(localModel)) {
    problems.push(
      `REFLECTOR_EMBEDDING_MODEL: REFLECTOR_EMBEDDINGS=local runs one of ${modelNames.join(", ")}, not ${localModel}`,
    );
  }
  if (env.LESSONS_FOR_TASK_CHECK === "model") {
    if (!endpoint) {
      problems.push("OPENAI_BASE_URL: LESSONS_FOR_TASK_CHECK=model needs OPENAI_BASE_URL or OPENAI_API_KEY");
    }
    if (env.REFLECTOR_LESSON_CHECK_MODEL === undefined && env.REFLECTOR_MODEL === undefined) {
      problems.push(
        "REFLECTOR_LESSON_CHECK_MODEL: LESSONS_FOR_TASK_CHECK=model needs REFLECTOR_LESSON_CHECK_MODEL or REFLECTOR_MODEL",
      );
    }
  }
  if (env.REFLECTOR_JUDGE === "model") {
    if (!endpoint) {
      problems.push("OPENAI_BASE_URL: REFLECTOR_JUDGE=model needs OPENAI_BASE_URL or OPENAI_API_KEY");
    }
    if (env.REFLECTOR_JUDGE_MODEL === undefined && env.REFLECTOR_MODEL === undefined) {
      problems.push(
        "REFLECTOR_JUDGE_MODEL: REFLECTOR_JUDGE=model needs REFLECTOR_JUDGE_MODEL or REFLECTOR_MODEL",
      );
    }
  }
  // A directory given on purpose that holds no model is a typo worth listing with the rest; the
  // default one, not yet fetched, is reported by the local embedder with the command that fetches it.
  const modelDir = env.REFLECTOR_EMBEDDING_MODEL_DIR;
  const embeddings = env.REFLECTOR_EMBEDDINGS ?? "static";
  if ((embeddings === "local" || embeddings === "static") && modelDir !== undefined) {
    const needed =
      embeddings === "local" ? ["model.onnx", "tokenizer.json"] : ["tokenizer.json", "static-embeddings.f32"];
    const missing = needed.filter((file) => !existsSync(join(modelDir, file)));
    if (missing.length > 0) {
      problems.push(`REFLECTOR_EMBEDDING_MODEL_DIR: ${modelDir} has no ${missing.join(" and ")}`);
    }
  }
  return problems;
}

/**
 * The warning start-up logs when the answer self-evaluation would run on the generator's model:
 * scoring an answer needs no more than a lighter model of the same endpoint, which costs a fraction.
 */
export function evaluatorCostWarning(config: Pick<LlmConfig, "generator" | "openai">): string | null {
  if (config.generator !== "openai" || config.openai.evaluatorModel !== undefined) return null;
  return `the answer self-evaluation runs on REFLECTOR_MODEL (${config.openai.model ?? "unset"}): name a lighter, cheaper model of the endpoint in REFLECTOR_EVALUATOR_MODEL`;
}
