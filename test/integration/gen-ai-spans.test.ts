import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { askJsonChat } from "../../src/adapters/llm/json-chat.js";
import { createOpenAiEmbedder } from "../../src/adapters/llm/openai-embedder.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";

/**
 * Reflector's own model calls as OpenTelemetry GenAI client spans, against the local
 * OpenAI-compatible server the adapter tests use, exported to memory: what Langfuse or Phoenix
 * reads from them (operation, provider, models, tokens, outcome), and nothing of the prompt.
 */
const exporter = new InMemorySpanExporter();
let fake: FakeOpenAiServer;
let client: OpenAI;
let port: string;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  fake = await startFakeOpenAiServer();
  client = new OpenAI({ baseURL: fake.url, apiKey: "key-that-must-not-show", maxRetries: 0 });
  port = new URL(fake.url).port;
});

afterEach(() => {
  exporter.reset();
});

afterAll(async () => {
  trace.disable();
  context.disable();
  await fake.close();
});

const secretPrompt = "the customer's card 4111-1111-1111-1111 was declined";
const chat = (model: string) =>
  askJsonChat(
    { client, model, timeoutMs: 5_000, maxRetries: 0, maxOutputTokens: 700 },
    "test chat",
    [{ role: "user", content: secretPrompt }],
    ({ raw }) => ({ value: raw, usable: raw.startsWith("{") }),
  );

function onlySpan(): ReadableSpan {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(1);
  const [span] = spans;
  if (!span) throw new Error("no span");
  return span;
}

describe("a model call's span", () => {
  it("carries the GenAI attributes of a chat completion, under the caller's span, without the prompt or the answer", async () => {
    fake.enqueueChat({
      kind: "completion",
      content: '{"lesson":"retry later"}',
      promptTokens: 321,
      completionTokens: 45,
    });
    const tracer = trace.getTracer("test");
    const parent = tracer.startSpan("process event");
    await context.with(trace.setSpan(context.active(), parent), () => chat("gpt-test-mini"));
    parent.end();
    const span = exporter.getFinishedSpans().find((s) => s.name !== "process event");
    if (!span) throw new Error("no model span");
    expect(span.name).toBe("chat gpt-test-mini");
    expect(span.kind).toBe(2); // SpanKind.CLIENT
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.instrumentationScope.name).toBe("reflector");
    expect(span.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.system": "openai",
      "gen_ai.request.model": "gpt-test-mini",
      "gen_ai.request.max_tokens": 700,
      "gen_ai.output.type": "json",
      "server.address": "127.0.0.1",
      "server.port": Number(port),
      "gen_ai.response.model": "gpt-test-mini",
      "gen_ai.response.id": "chatcmpl-fake",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 321,
      "gen_ai.usage.output_tokens": 45,
    });
    expect(span.status.code).toBe(0); // unset: it went well
    const everything = JSON.stringify(exporter.getFinishedSpans().map((s) => [s.attributes, s.events]));
    for (const secret of ["4111", "retry later", "key-that-must-not-show"])
      expect(everything).not.toContain(secret);
  });

  it("says how a failed request failed (error.type), and an unusable answer is an error too", async () => {
    fake.enqueueChat({
      kind: "status",
      status: 429,
      body: { error: { message: `slow down: ${secretPrompt}` } },
    });
    await expect(chat("gpt-test-mini")).rejects.toThrow();
    const failed = onlySpan();
    expect(failed.attributes["error.type"]).toBe("rate_limited");
    expect(failed.status).toEqual({ code: 2, message: "rate_limited" }); // SpanStatusCode.ERROR
    expect(failed.attributes).not.toHaveProperty("gen_ai.usage.input_tokens");
    expect(JSON.stringify([failed.attributes, failed.events, failed.status])).not.toContain("4111");
    exporter.reset();

    fake.enqueueChat({ kind: "completion", content: "not json at all" });
    await chat("gpt-test-mini");
    const unusable = onlySpan();
    expect(unusable.attributes["error.type"]).toBe("invalid_output");
    expect(unusable.attributes["gen_ai.usage.output_tokens"]).toBe(50);
  });

  it("names an embeddings request by its operation, with the input tokens only", async () => {
    const embedder = createOpenAiEmbedder({ client, model: "embed-test", timeoutMs: 5_000, maxRetries: 0 });
    await embedder.embed(["one text", "another"]);
    const span = onlySpan();
    expect(span.name).toBe("embeddings embed-test");
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "embeddings",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "embed-test",
      "gen_ai.response.model": "embed-test",
      "gen_ai.usage.input_tokens": 20,
    });
    expect(span.attributes).not.toHaveProperty("gen_ai.usage.output_tokens");
    expect(span.attributes).not.toHaveProperty("gen_ai.output.type");
  });
});
