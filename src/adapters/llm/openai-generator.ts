import { randomBytes } from "node:crypto";
import type OpenAI from "openai";
import type { Reflection } from "../../domain/contracts/index.js";
import type { ReflectionGenerator } from "../../pipeline/ports.js";
import { callLlm, type LlmCallPolicy } from "./llm-call.js";
import { LlmOutputError, toReflectorError } from "./llm-errors.js";
import {
  buildReflectionPrompt,
  parseReflectionOutput,
  repairPrompt,
  type ParsedOutput,
  type PromptGuidance,
  type PromptSecrets,
} from "./prompts.js";

export interface OpenAiGeneratorOptions extends LlmCallPolicy {
  client: OpenAI;
  model: string;
  /** RT-010's minimum lengths, told to the model. */
  guidance?: PromptGuidance;
  /** Source of the per-request canary and block nonce; random by default. */
  randomToken?: () => string;
}

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * The `openai` generator: seed 002's prompts against any OpenAI-compatible chat endpoint, JSON
 * output checked against the strict `Reflection` contract, and one repair request (showing the
 * model its answer and what was wrong with it) before giving up.
 */
export function createOpenAiGenerator(options: OpenAiGeneratorOptions): ReflectionGenerator {
  const guidance = options.guidance ?? { analysisMinChars: 100, learningMinChars: 50 };
  const randomToken = options.randomToken ?? (() => randomBytes(12).toString("hex"));

  async function complete(
    messages: ChatMessage[],
    secrets: PromptSecrets,
    system: string,
  ): Promise<{ raw: string; parsed: ParsedOutput }> {
    return callLlm(options, options.model, "openai generator", async (requestOptions) => {
      const response = await options.client.chat.completions.create(
        { model: options.model, messages, response_format: { type: "json_object" } },
        requestOptions,
      );
      // A proxy or a broken server can answer 200 with something that is no completion at all
      // (an HTML page, `{}`): that is an unusable answer, not a bug of ours.
      const choice = Array.isArray(response.choices) ? response.choices[0] : undefined;
      const raw = choice?.message.content ?? "";
      const parsed: ParsedOutput =
        choice?.finish_reason === "length"
          ? { ok: false, problems: ["the answer was cut off at the token limit; be more concise"] }
          : parseReflectionOutput(raw, secrets, system);
      return {
        value: { raw, parsed },
        promptTokens: response.usage?.prompt_tokens ?? 0,
        completionTokens: response.usage?.completion_tokens ?? 0,
        invalidOutput: !parsed.ok,
      };
    });
  }

  return {
    name: "openai",
    async generate(request): Promise<Reflection> {
      const secrets: PromptSecrets = { canary: `canary-${randomToken()}`, nonce: randomToken().slice(0, 16) };
      const prompt = buildReflectionPrompt(request, secrets, guidance);
      const messages: ChatMessage[] = [
        { role: "system", content: prompt.system },
        { role: "user", content: prompt.user },
      ];
      const first = await complete(messages, secrets, prompt.system);
      if (first.parsed.ok) return first.parsed.reflection;

      const repair: ChatMessage[] = [
        ...messages,
        { role: "user", content: repairPrompt(first.raw, first.parsed.problems, secrets) },
      ];
      const second = await complete(repair, secrets, prompt.system);
      if (second.parsed.ok) return second.parsed.reflection;
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
