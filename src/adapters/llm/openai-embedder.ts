import type OpenAI from "openai";
import type { Embedder } from "../../pipeline/ports.js";
import { callLlm, type LlmCallPolicy } from "./llm-call.js";
import { LlmOutputError } from "./llm-errors.js";
import { estimateTokens } from "./token-estimate.js";

export interface OpenAiEmbedderOptions extends LlmCallPolicy {
  client: OpenAI;
  model: string;
}

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint: similarity of meaning, not only of
 * wording. Its name carries the model, because vectors of different models (and dimensions) must
 * never be compared; the store keeps each reflection's embedder name for that reason.
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  return {
    name: `openai:${options.model}`,
    async embed(texts, tenantId) {
      if (texts.length === 0) return [];
      // The tenant's texts cost tokens on a remote endpoint: they count against its budget.
      const policy = tenantId !== undefined ? { ...options, tenantId } : { ...options, tenantId: undefined };
      const estimate = texts.reduce((sum, text) => sum + estimateTokens(text), 0);
      return callLlm(
        policy,
        options.model,
        "openai embedder",
        async (requestOptions) => {
          const response = await options.client.embeddings.create(
            { model: options.model, input: texts, encoding_format: "float" },
            requestOptions,
          );
          // Not trusting the SDK's types: a broken server answers 200 with any body at all.
          const data: unknown = response.data;
          if (
            !Array.isArray(data) ||
            data.some((d) => !Array.isArray((d as { embedding?: unknown }).embedding))
          )
            throw new LlmOutputError("the embeddings response has no list of vectors", []);
          const vectors = [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
          const dimensions = vectors[0]?.length ?? 0;
          if (
            vectors.length !== texts.length ||
            dimensions === 0 ||
            vectors.some((v) => v.length !== dimensions)
          ) {
            throw new LlmOutputError(
              `expected ${String(texts.length)} vectors of one dimension, got ${String(vectors.length)}`,
              [],
            );
          }
          return {
            value: vectors,
            // Typed as always present; a broken server may leave it out.
            promptTokens: (response.usage as typeof response.usage | undefined)?.prompt_tokens ?? 0,
            completionTokens: 0,
            usageMissing: !(response.usage as typeof response.usage | undefined),
            ...(typeof response.model === "string" ? { genAi: { model: response.model } } : {}),
          };
        },
        estimate,
        { operation: "embeddings", baseUrl: options.client.baseURL },
      );
    },
  };
}
