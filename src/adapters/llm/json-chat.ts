import type OpenAI from "openai";
import type { GenAiAnswer } from "./gen-ai-span.js";
import { callLlm, type LlmCallPolicy } from "./llm-call.js";
import { estimateChatTokens, estimateTokens } from "./token-estimate.js";

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export interface JsonChatOptions extends LlmCallPolicy {
  client: OpenAI;
  model: string;
  /** `max_completion_tokens` of each request (`LLM_MAX_OUTPUT_TOKENS`, default 2,000). */
  maxOutputTokens?: number;
}

/** What the endpoint answered, before the caller reads it. */
export interface JsonChatAnswer {
  /** The message's content ("" when there is none). */
  raw: string;
  /** A refusal the model gave in the API's own `refusal` field, if any. */
  refusal?: string;
  /** The model stopped at the token limit. */
  cut: boolean;
}

/**
 * One JSON-mode chat request under the one LLM call policy (retries, breaker, slots, spend,
 * metrics: llm-call.ts). `read` turns the answer into the caller's value and says whether it was
 * usable; an unusable answer is counted as invalid output, not retried here (the caller decides
 * whether to ask again). The request's size is estimated before it is sent; with
 * `reportPromptTokens`, the observer also hears the tokens the endpoint reports.
 */
export async function askJsonChat<T>(
  options: JsonChatOptions,
  what: string,
  messages: ChatMessage[],
  read: (answer: JsonChatAnswer) => { value: T; usable: boolean },
  settings: { reportPromptTokens?: boolean; estimate?: number } = {},
): Promise<T> {
  const estimate = settings.estimate ?? estimateChatTokens(messages);
  const maxTokens = options.maxOutputTokens ?? 2_000;
  return callLlm(
    options,
    options.model,
    what,
    async (requestOptions) => {
      const response = await options.client.chat.completions.create(
        {
          model: options.model,
          messages,
          response_format: { type: "json_object" },
          max_completion_tokens: maxTokens,
        },
        requestOptions,
      );
      // A proxy or a broken server can answer 200 with something that is no completion at all
      // (an HTML page, `{}`): that is an unusable answer, not a bug of ours.
      const choice = Array.isArray(response.choices) ? response.choices[0] : undefined;
      const raw = choice?.message.content ?? "";
      const refusal = choice?.message.refusal;
      const { value, usable } = read({
        raw,
        ...(typeof refusal === "string" && refusal.length > 0 ? { refusal } : {}),
        cut: choice?.finish_reason === "length",
      });
      const reported = response.usage?.prompt_tokens;
      if (settings.reportPromptTokens && typeof reported === "number" && reported > 0)
        options.observer?.promptTokens?.({ model: options.model, source: "reported", tokens: reported });
      return {
        value,
        promptTokens: response.usage?.prompt_tokens ?? 0,
        completionTokens: response.usage?.completion_tokens ?? 0,
        invalidOutput: !usable,
        usageMissing: !response.usage,
        estimatedCompletionTokens: estimateTokens(raw),
        genAi: answerOf(response),
      };
    },
    estimate,
    { operation: "chat", baseUrl: options.client.baseURL, maxTokens, outputType: "json" },
  );
}

/** The answer's model, id and finish reasons, read without trusting the body's shape. */
function answerOf(response: { model?: unknown; id?: unknown; choices?: unknown }): GenAiAnswer {
  const choices: unknown[] = Array.isArray(response.choices) ? response.choices : [];
  const finishReasons = choices
    .map((choice) => (choice as { finish_reason?: unknown } | null)?.finish_reason)
    .filter((reason): reason is string => typeof reason === "string");
  return {
    ...(typeof response.model === "string" ? { model: response.model } : {}),
    ...(typeof response.id === "string" ? { id: response.id } : {}),
    ...(finishReasons.length > 0 ? { finishReasons } : {}),
  };
}
