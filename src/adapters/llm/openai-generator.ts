import { randomBytes } from "node:crypto";
import type OpenAI from "openai";
import { locateFailure } from "../../domain/attribution/attribute-failure.js";
import type { Reflection } from "../../domain/contracts/index.js";
import { defaultQualityConfig } from "../../domain/quality/quality-config.js";
import type { GenerationRequest, ReflectionGenerator } from "../../pipeline/ports.js";
import { askJsonChat, type ChatMessage } from "./json-chat.js";
import type { LlmCallPolicy } from "./llm-call.js";
import { LlmOutputError, toReflectorError } from "./llm-errors.js";
import { chooseAttribution } from "./model-attribution.js";
import {
  buildReflectionPrompt,
  defaultPromptMaxTokens,
  repairPrompt,
  type PromptGuidance,
  type PromptSecrets,
  type ReflectionInstructions,
} from "./prompts.js";
import { parseReflectionOutput, type ParsedOutput } from "./reflection-output.js";
import { estimateChatTokens } from "./token-estimate.js";

export interface OpenAiGeneratorOptions extends LlmCallPolicy {
  client: OpenAI;
  model: string;
  /** The quality rules' minimum lengths, told to the model. */
  guidance?: PromptGuidance;
  /** Source of the per-request canary and block nonce; random by default. */
  randomToken?: () => string;
  /** `LLM_PROMPT_MAX_TOKENS`: no request (repair included) is estimated above it. */
  promptMaxTokens?: number;
  /** `max_completion_tokens` of each request (`LLM_MAX_OUTPUT_TOKENS`, default 2,000). */
  maxOutputTokens?: number;
  /** The task set for a failure and a success (`REFLECTOR_PROMPTS_FILE`); the defaults otherwise. */
  instructions?: Partial<ReflectionInstructions> | undefined;
}

/**
 * The `openai` generator: the failure and success prompts against any OpenAI-compatible chat endpoint, JSON
 * output checked against the strict `Reflection` contract (top-level keys it does not name are
 * dropped, not repaired: reflection-output.ts), and one repair request (showing the model its answer and
 * what was wrong with it) before giving up. Every request stays within the
 * prompt token budget. A failure's reflection always carries an attribution: the model's when it
 * gives a usable one, unless the offline rules found the step on evidence more precise than the
 * model has proven to be; else the offline one (attribute-failure.ts, model-attribution.ts).
 */
export function createOpenAiGenerator(options: OpenAiGeneratorOptions): ReflectionGenerator {
  const guidance = options.guidance ?? defaultQualityConfig.guidance;
  const randomToken = options.randomToken ?? (() => randomBytes(12).toString("hex"));
  const maxTokens = options.promptMaxTokens ?? defaultPromptMaxTokens;

  async function complete(
    messages: ChatMessage[],
    secrets: PromptSecrets,
    system: string,
    request: GenerationRequest,
  ): Promise<{ raw: string; parsed: ParsedOutput }> {
    const estimate = estimateChatTokens(messages);
    options.observer?.promptTokens?.({ model: options.model, source: "estimate", tokens: estimate });
    return askJsonChat(
      { ...options, tenantId: request.event.tenantId },
      "openai generator",
      messages,
      ({ raw, refusal, cut }) => {
        // A model that declines says so in `refusal` (structured outputs) or in plain text instead
        // of JSON; either way the answer is unusable, and the repair request says why.
        const parsed: ParsedOutput = cut
          ? {
              ok: false,
              problems: ["the answer was cut off at the token limit; be more concise"],
              answer: raw,
            }
          : refusal !== undefined && !raw
            ? { ok: false, problems: ["the answer was a refusal, not the JSON object"], answer: refusal }
            : parseReflectionOutput(raw, secrets, system, request.event);
        return { value: { raw, parsed }, usable: parsed.ok };
      },
      { reportPromptTokens: true, estimate },
    );
  }

  return {
    name: "openai",
    async generate(request): Promise<Reflection> {
      const secrets: PromptSecrets = { canary: `canary-${randomToken()}`, nonce: randomToken().slice(0, 16) };
      const located = request.located ?? locateFailure(request.event);
      const prompt = buildReflectionPrompt(request, secrets, guidance, {
        maxTokens,
        located,
        instructions: options.instructions,
      });
      const withAttribution = (reflection: Reflection): Reflection =>
        request.event.outcome === "success"
          ? reflection
          : {
              ...reflection,
              attribution: chooseAttribution(
                reflection.attribution,
                located.attribution,
                located.basis,
                undefined,
                request.event,
              ),
            };
      const messages: ChatMessage[] = [
        { role: "system", content: prompt.system },
        { role: "user", content: prompt.user },
      ];
      const first = await complete(messages, secrets, prompt.system, request);
      if (first.parsed.ok) return withAttribution(first.parsed.reflection);

      // What the first request left of the budget (at least the repair reserve) bounds the repair.
      const reserve = maxTokens - prompt.estimatedTokens;
      const repair: ChatMessage[] = [
        ...messages,
        {
          role: "user",
          content: repairPrompt(first.parsed.answer, first.parsed.problems, secrets, reserve),
        },
      ];
      const second = await complete(repair, secrets, prompt.system, request);
      if (second.parsed.ok) return withAttribution(second.parsed.reflection);
      throw toReflectorError(
        new LlmOutputError(
          `invalid output after one repair: ${second.parsed.problems.slice(0, 5).join("; ")}`,
          second.parsed.problems,
        ),
        "openai generator",
      );
    },
  };
}
