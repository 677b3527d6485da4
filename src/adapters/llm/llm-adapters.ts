import OpenAI from "openai";
import type { AnswerEvaluator, Embedder, ReflectionGenerator } from "../../pipeline/ports.js";
import { createHeuristicAnswerEvaluator } from "./heuristic-answer-evaluator.js";
import { createOpenAiAnswerEvaluator } from "./openai-answer-evaluator.js";
import { createHashingEmbedder } from "../embedding/hashing-embedder.js";
import { createLocalEmbedder } from "../embedding/local-embedder.js";
import { createHeuristicGenerator } from "./heuristic-generator.js";
import { createCircuitBreaker, type CircuitBreakerOptions } from "./circuit-breaker.js";
import { FairSlots } from "./fair-slots.js";
import type { LlmCallOutcome, LlmObserver } from "./llm-call.js";
import { createOpenAiEmbedder } from "../embedding/openai-embedder.js";
import { createCachedEmbedder } from "../embedding/cached-embedder.js";
import { createOpenAiGenerator } from "./openai-generator.js";

export interface LlmSettings {
  generator: "heuristic" | "openai";
  embeddings: "local" | "openai" | "hashing";
  /** The local embedder's model directory (model.onnx, tokenizer.json). */
  embeddingModelDir: string;
  openai: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    model: string | undefined;
    embeddingModel: string | undefined;
    /** Model for seed 001's answer self-evaluation; defaults to `model`. */
    evaluatorModel?: string | undefined;
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
  spend?: { record(tenantId: string, tokens: number): Promise<void> };
}

/**
 * Chooses the generator and the embedder from configuration; offline ones are the defaults (the
 * heuristic generator and the local embedding model). Throws when the local model is missing.
 */
export function createLlmAdapters(
  settings: LlmSettings,
  deps: LlmAdapterDeps = {},
): {
  generator: ReflectionGenerator;
  embedder: Embedder;
  answerEvaluator: AnswerEvaluator;
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
          ...(openai.promptMaxTokens !== undefined ? { promptMaxTokens: openai.promptMaxTokens } : {}),
          ...(openai.maxOutputTokens !== undefined ? { maxOutputTokens: openai.maxOutputTokens } : {}),
        })
      : createHeuristicGenerator();
  // A model's vectors are worth remembering (recurring failures embed the same trace text);
  // feature hashing is cheaper than the lookup.
  const embedder =
    settings.embeddings === "openai" && openai.embeddingModel
      ? createCachedEmbedder(
          createOpenAiEmbedder({ ...policy, client: getClient(), model: openai.embeddingModel }),
        )
      : settings.embeddings === "local"
        ? createCachedEmbedder(createLocalEmbedder({ modelDir: settings.embeddingModelDir }))
        : createHashingEmbedder();
  // Seed 001: answers are judged by the same kind of generator, with a lighter model when one is set.
  const evaluatorModel = openai.evaluatorModel ?? openai.model;
  const answerEvaluator =
    settings.generator === "openai" && evaluatorModel
      ? createOpenAiAnswerEvaluator({
          ...policy,
          client: getClient(),
          model: evaluatorModel,
          ...(openai.maxOutputTokens !== undefined ? { maxOutputTokens: openai.maxOutputTokens } : {}),
        })
      : createHeuristicAnswerEvaluator();
  return { generator, embedder, answerEvaluator, slots };
}
