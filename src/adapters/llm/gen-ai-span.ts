import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import { tracerName } from "../../observability/tracing.js";
import { classifyLlmError } from "./llm-errors.js";

/**
 * One request to the model as the OpenTelemetry GenAI semantic conventions describe it, so that
 * Langfuse, Phoenix or any OTLP backend shows Reflector's own model calls with their model, tokens
 * and outcome. Attributes only: never the prompt, the answer or a key (the conventions make
 * message content opt-in; Reflector does not opt in).
 */
export interface GenAiRequest {
  /** `gen_ai.operation.name`: `chat` (chat completions) or `embeddings`. */
  operation: "chat" | "embeddings";
  /** The endpoint's base URL (the client's `baseURL`): `server.address` and `server.port`. */
  baseUrl?: string;
  /** `gen_ai.request.max_tokens`. */
  maxTokens?: number;
  /** `gen_ai.output.type`: `json` for JSON-mode chat. */
  outputType?: "json";
}

/** What an answer tells the span, besides its usage. */
export interface GenAiAnswer {
  /** `gen_ai.response.model`: the model that answered (it may name a version of the one asked). */
  model?: string;
  /** `gen_ai.response.id`. */
  id?: string;
  /** `gen_ai.response.finish_reasons`, one per choice. */
  finishReasons?: string[];
}

/** What `inGenAiSpan`'s work resolves to: the answer's usage (absent when the endpoint omitted it). */
export interface GenAiOutcome {
  promptTokens: number;
  completionTokens: number;
  usageMissing?: boolean;
  invalidOutput?: boolean;
  genAi?: GenAiAnswer;
}

/** OpenAI's API, whichever server speaks it: the conventions' value for OpenAI-compatible clients. */
const provider = "openai";

function serverAttributes(baseUrl: string | undefined): Attributes {
  if (!baseUrl) return {};
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return { "server.address": url.hostname, "server.port": port };
  } catch {
    return {};
  }
}

function endWith(span: Span, outcome: GenAiOutcome, operation: GenAiRequest["operation"]): void {
  const answer = outcome.genAi ?? {};
  span.setAttributes({
    ...(answer.model ? { "gen_ai.response.model": answer.model } : {}),
    ...(answer.id ? { "gen_ai.response.id": answer.id } : {}),
    ...(answer.finishReasons?.length ? { "gen_ai.response.finish_reasons": answer.finishReasons } : {}),
    // Only what the endpoint counted: an estimate is no usage.
    ...(outcome.usageMissing
      ? {}
      : {
          "gen_ai.usage.input_tokens": outcome.promptTokens,
          // Embeddings produce vectors, not tokens.
          ...(operation === "chat" ? { "gen_ai.usage.output_tokens": outcome.completionTokens } : {}),
        }),
  });
  if (outcome.invalidOutput) {
    span.setAttribute("error.type", "invalid_output");
    span.setStatus({ code: SpanStatusCode.ERROR, message: "invalid_output" });
  }
  span.end();
}

/**
 * Runs one model request inside a client span named `{operation} {model}` with the GenAI
 * attributes (gen_ai.operation.name, gen_ai.provider.name and the older gen_ai.system,
 * gen_ai.request.model, gen_ai.response.model, gen_ai.usage.input_tokens and output_tokens, …).
 * A failure sets `error.type` to Reflector's classification of it (timeout, rate_limited, …),
 * never its message. The HTTP client's own span, when the fetch instrumentation is on, is its
 * child. With tracing off the API's tracer is a no-op and this costs nothing.
 */
export async function inGenAiSpan<T extends GenAiOutcome>(
  request: GenAiRequest,
  model: string,
  work: () => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer(tracerName);
  return tracer.startActiveSpan(
    `${request.operation} ${model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "gen_ai.operation.name": request.operation,
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gen_ai.request.model": model,
        ...(request.maxTokens !== undefined ? { "gen_ai.request.max_tokens": request.maxTokens } : {}),
        ...(request.outputType ? { "gen_ai.output.type": request.outputType } : {}),
        ...serverAttributes(request.baseUrl),
      },
    },
    async (span) => {
      try {
        const outcome = await work();
        endWith(span, outcome, request.operation);
        return outcome;
      } catch (err) {
        const code = classifyLlmError(err).code;
        span.setAttribute("error.type", code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: code });
        span.end();
        throw err;
      }
    },
  );
}
