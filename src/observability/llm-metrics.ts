import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export interface LlmPrices {
  /** USD per million prompt (input) tokens; 0 means "not priced" and counts no cost. */
  inputPerMillionUsd: number;
  /** USD per million completion (output) tokens. */
  outputPerMillionUsd: number;
}

export interface LlmRequestRecord {
  model: string;
  outcome: "success" | "invalid_output" | "error";
  durationSeconds: number;
  promptTokens: number;
  completionTokens: number;
}

/** LLM calls, tokens, errors and cost, on the app's registry. The adapters see only this shape. */
export function createLlmMetrics(registry: Registry, prices: LlmPrices) {
  const requests = new Counter({
    name: "reflector_llm_requests_total",
    help: "HTTP requests to the LLM endpoint, by model and outcome (success, invalid_output, error).",
    labelNames: ["model", "outcome"] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: "reflector_llm_errors_total",
    help: "LLM failures by classifier code (timeout, rate_limited, server_error, invalid_output, ...).",
    labelNames: ["code"] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: "reflector_llm_tokens_total",
    help: "Tokens the LLM endpoint reported, by model and kind (prompt, completion).",
    labelNames: ["model", "kind"] as const,
    registers: [registry],
  });
  const cost = new Counter({
    name: "reflector_llm_cost_usd_total",
    help: "Estimated LLM spend in USD from reported tokens and the configured prices (0 when unpriced).",
    labelNames: ["model"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "reflector_llm_request_duration_seconds",
    help: "Duration of one LLM HTTP request, by model.",
    labelNames: ["model"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60],
    registers: [registry],
  });
  // Labels: the configured model(s) and two sources, so the series stay few.
  const promptTokens = new Histogram({
    name: "reflector_llm_prompt_tokens",
    help: "Prompt tokens per generation request, by model and source: estimate (before sending, chars-based) or reported (the endpoint's usage.prompt_tokens).",
    labelNames: ["model", "source"] as const,
    buckets: [250, 500, 1_000, 2_000, 3_000, 4_000, 6_000, 8_000, 12_000, 16_000, 32_000, 64_000, 128_000],
    registers: [registry],
  });
  const circuitOpen = new Gauge({
    name: "reflector_llm_circuit_open",
    help: "1 while the LLM circuit breaker is open (calls short-circuited), else 0.",
    registers: [registry],
  });
  circuitOpen.set(0);

  return {
    request(record: LlmRequestRecord): void {
      requests.inc({ model: record.model, outcome: record.outcome });
      duration.observe({ model: record.model }, record.durationSeconds);
      if (record.promptTokens > 0) tokens.inc({ model: record.model, kind: "prompt" }, record.promptTokens);
      if (record.completionTokens > 0) {
        tokens.inc({ model: record.model, kind: "completion" }, record.completionTokens);
      }
      const usd =
        (record.promptTokens * prices.inputPerMillionUsd +
          record.completionTokens * prices.outputPerMillionUsd) /
        1_000_000;
      // Always touch the series so dashboards see the model even before it is priced.
      cost.inc({ model: record.model }, usd);
    },
    error(code: string): void {
      errors.inc({ code });
    },
    promptTokens(record: { model: string; source: "estimate" | "reported"; tokens: number }): void {
      promptTokens.observe({ model: record.model, source: record.source }, record.tokens);
    },
    setCircuitOpen(open: boolean): void {
      circuitOpen.set(open ? 1 : 0);
    },
  };
}

export type LlmMetrics = ReturnType<typeof createLlmMetrics>;
