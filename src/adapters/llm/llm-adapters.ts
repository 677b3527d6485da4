import OpenAI from "openai";
import type { LessonCheck } from "../../pipeline/lesson-check.js";
import type { AnswerEvaluator, Embedder, ReflectionGenerator } from "../../pipeline/ports.js";
import { createHeuristicAnswerEvaluator } from "./heuristic-answer-evaluator.js";
import { createOpenAiAnswerEvaluator, defaultEvaluatorMaxTokens } from "./openai-answer-evaluator.js";
import { createHeuristicGenerator } from "./heuristic-generator.js";
import { createCircuitBreaker, type CircuitBreakerOptions } from "./circuit-breaker.js";
import { FairSlots } from "./fair-slots.js";
import type { LlmCallOutcome, LlmObserver } from "./llm-call.js";
import { createOpenAiEmbedder } from "./openai-embedder.js";
import type { HeuristicPackName } from "../../domain/heuristic/packs/heuristic-packs.js";
import { createOpenAiGenerator } from "./openai-generator.js";
import { createOpenAiLessonCheck } from "./openai-lesson-check.js";
import type { CauseJudge } from "../../pipeline/judge-reflection.js";
import { createOpenAiCauseJudge } from "./openai-cause-judge.js";

export interface LlmSettings {
  generator: "heuristic" | "openai";
  /** The offline generator's domain packs; none by default. */
  heuristicPacks?: readonly HeuristicPackName[];
  embeddings: "static" | "local" | "openai" | "hashing";
  /** `model`: a model reads whether each analysis of a failure states a cause (the model judge). */
  judge?: "offline" | "model";
  /** `model`: "lessons for a task" asks the model which of the nearest lessons apply. */
  lessonCheck?: "meaning" | "model";
  /** How long an agent waits for that check, slot and request (default 5 s). */
  lessonCheckTimeoutMs?: number;
  /** The check's own concurrent requests (default 4) and how many more may wait (default 16). */
  lessonCheckConcurrency?: number;
  lessonCheckQueue?: number;
  /** REFLECTOR_PROMPTS_FILE: the task set for a failure and a success, in place of the defaults. */
  reflectionInstructions?: { failure?: string; success?: string } | undefined;
  openai: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    model: string | undefined;
    embeddingModel: string | undefined;
    /** Model for the answer self-evaluation; defaults to `model`. */
    evaluatorModel?: string | undefined;
    /** `max_completion_tokens` of each answer self-evaluation request (default 500). */
    evaluatorMaxTokens?: number;
    /** Model of the lessons-for-task check; defaults to `model`. */
    lessonCheckModel?: string | undefined;
    /** Model of the model judge; defaults to `model`. */
    judgeModel?: string | undefined;
    timeoutMs: number;
    maxRetries: number;
    /** Circuit breaker: consecutive retryable failures that open it (default 5), and for how long. */
    circuitFailureThreshold?: number;
    circuitOpenMs?: number;
    /** Token budget of one generator request (`LLM_PROMPT_MAX_TOKENS`); the generator's default when unset. */
    promptMaxTokens?: number;
    /** `max_completion_tokens` of every chat request (`LLM_MAX_OUTPUT_TOKENS`). */
    maxOutputTokens?: number;
  };
  /** `LLM_MAX_CONCURRENT_CALLS`: HTTP requests in flight at once, for every model of the endpoint. */
  spend?: { maxConcurrentCalls: number };
}

export interface LlmAdapterDeps {
  observer?: LlmObserver;
  onOutcome?: (outcome: LlmCallOutcome) => void;
  onCircuitChange?: CircuitBreakerOptions["onChange"];
  /** Counts each tenant's reported tokens against its budget (the spend gate). */
  spend?: {
    record(tenantId: string, tokens: number): Promise<void>;
    release?(tenantId: string, tokens: number): Promise<void>;
    reserve?(tenantId: string, tokens: number): Promise<boolean>;
  };
}

/**
 * Chooses the generator and the answer evaluator from configuration, the heuristic ones by default,
 * and builds the OpenAI embedder when embeddings come from the endpoint (it shares the endpoint's
 * circuit breaker); null otherwise, and the composition root builds an offline embedder.
 */
export function createLlmAdapters(
  settings: LlmSettings,
  deps: LlmAdapterDeps = {},
): {
  generator: ReflectionGenerator;
  openAiEmbedder: Embedder | null;
  answerEvaluator: AnswerEvaluator;
  /** The lessons-for-task check by the model; null when meaning alone chooses. */
  lessonCheck: LessonCheck | null;
  /** The model judge; null when the offline reading judges alone (`REFLECTOR_JUDGE=offline`). */
  causeJudge: CauseJudge | null;
  /** The endpoint's concurrency slots, for the metrics. */
  slots: FairSlots;
} {
  const { openai } = settings;
  let client: OpenAI | null = null;
  const getClient = (): OpenAI => {
    // A local OpenAI-compatible server may need no key; the SDK insists on one, so send a placeholder.
    client ??= new OpenAI({
      apiKey: openai.apiKey ?? "unused",
      ...(openai.baseUrl ? { baseURL: openai.baseUrl } : {}),
      maxRetries: 0,
      timeout: openai.timeoutMs,
    });
    return client;
  };
  // One breaker for the endpoint: generator, embedder and evaluator share the server.
  const breaker = createCircuitBreaker({
    failureThreshold: openai.circuitFailureThreshold ?? 5,
    openMs: openai.circuitOpenMs ?? 10_000,
    ...(deps.onCircuitChange ? { onChange: deps.onCircuitChange } : {}),
  });
  // One cap for the endpoint too, whichever model or component the request is for.
  const slots = new FairSlots(settings.spend?.maxConcurrentCalls ?? 16);
  const policy = {
    breaker,
    slots,
    ...(deps.spend ? { spend: deps.spend } : {}),
    timeoutMs: openai.timeoutMs,
    maxRetries: openai.maxRetries,
    ...(deps.observer ? { observer: deps.observer } : {}),
    ...(deps.onOutcome ? { onOutcome: deps.onOutcome } : {}),
  };

  const generator =
    settings.generator === "openai" && openai.model
      ? createOpenAiGenerator({
          ...policy,
          client: getClient(),
          model: openai.model,
          instructions: settings.reflectionInstructions,
          ...(openai.promptMaxTokens !== undefined ? { promptMaxTokens: openai.promptMaxTokens } : {}),
          ...(openai.maxOutputTokens !== undefined ? { maxOutputTokens: openai.maxOutputTokens } : {}),
        })
      : createHeuristicGenerator(settings.heuristicPacks);
  const openAiEmbedder =
    settings.embeddings === "openai" && openai.embeddingModel
      ? createOpenAiEmbedder({ ...policy, client: getClient(), model: openai.embeddingModel })
      : null;
  // Answers are judged by the same kind of generator, with a lighter model when one is set.
  const evaluatorModel = openai.evaluatorModel ?? openai.model;
  const answerEvaluator =
    settings.generator === "openai" && evaluatorModel
      ? createOpenAiAnswerEvaluator({
          ...policy,
          client: getClient(),
          model: evaluatorModel,
          maxOutputTokens: openai.evaluatorMaxTokens ?? defaultEvaluatorMaxTokens,
        })
      : createHeuristicAnswerEvaluator();
  // An agent waits for this one: a failed request is not retried, meaning alone answers instead.
  // Any `read` key can ask for it, so it has a breaker, slots and a queue of its own: its answers
  // never open the pipeline's circuit nor take the pipeline's slots.
  const lessonCheckModel = openai.lessonCheckModel ?? openai.model;
  const spend = deps.spend;
  const lessonCheck =
    settings.lessonCheck === "model" && lessonCheckModel
      ? createOpenAiLessonCheck({
          breaker: createCircuitBreaker({
            failureThreshold: openai.circuitFailureThreshold ?? 5,
            openMs: openai.circuitOpenMs ?? 10_000,
          }),
          slots: new FairSlots(settings.lessonCheckConcurrency ?? 4),
          maxQueued: settings.lessonCheckQueue ?? 16,
          ...(spend?.reserve
            ? {
                budget: {
                  reserve: spend.reserve.bind(spend),
                  record: spend.record.bind(spend),
                  ...(spend.release ? { release: spend.release.bind(spend) } : {}),
                },
              }
            : {}),
          ...(deps.observer ? { observer: deps.observer } : {}),
          maxRetries: 0,
          timeoutMs: settings.lessonCheckTimeoutMs ?? 5_000,
          deadlineMs: settings.lessonCheckTimeoutMs ?? 5_000,
          client: getClient(),
          model: lessonCheckModel,
        })
      : null;
  // Part of the pipeline's own work on a failure: the pipeline's breaker, slots and spend.
  const judgeModel = openai.judgeModel ?? openai.model;
  const causeJudge =
    settings.judge === "model" && judgeModel
      ? createOpenAiCauseJudge({
          ...policy,
          client: getClient(),
          model: judgeModel,
          ...(openai.maxOutputTokens !== undefined ? { maxOutputTokens: openai.maxOutputTokens } : {}),
        })
      : null;
  return { generator, openAiEmbedder, answerEvaluator, lessonCheck, causeJudge, slots };
}
