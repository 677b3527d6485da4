import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCircuitBreaker } from "../../src/adapters/llm/circuit-breaker.js";
import { createOpenAiEmbedder } from "../../src/adapters/llm/openai-embedder.js";
import { createOpenAiGenerator } from "../../src/adapters/llm/openai-generator.js";
import { failureOf, ReflectorError } from "../../src/domain/errors.js";
import { nextStep } from "../../src/adapters/kafka/failure-policy.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { taskEvent } from "../support/task-events.js";

/**
 * The faults the LLM chaos run injects, one at a time against a real HTTP server: each must end
 * in the error code the failure policy expects (an unusable answer spends the event's attempts;
 * an unusable endpoint holds the event), never in an untyped error the policy cannot place.
 */
let fake: FakeOpenAiServer;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  client = new OpenAI({ apiKey: "unused", baseURL: fake.url, maxRetries: 0 });
});

afterAll(async () => {
  await fake.close();
});

const policy = { timeoutMs: 300, maxRetries: 1, retryBaseMs: 1, retryMaxDelayMs: 2 };
const request = {
  event: taskEvent(),
  attempt: 1,
  violations: [],
  missingFields: [],
  insights: [],
  answerEvaluation: null,
};

async function codeOf(work: Promise<unknown>): Promise<string> {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReflectorError);
  return (err as ReflectorError).code;
}

describe("LLM faults end in the code the failure policy expects", () => {
  it("a 200 whose body is an HTML page (no choices) is an invalid answer, not a crash-like unknown", async () => {
    fake.reset();
    const html = {
      kind: "raw",
      status: 200,
      body: "<html>Bad gateway</html>",
      contentType: "text/html",
    } as const;
    fake.enqueueChat(html, html);
    const generator = createOpenAiGenerator({ ...policy, client, model: "m" });
    expect(await codeOf(generator.generate(request))).toBe("LLM_OUTPUT_INVALID");
  });

  it("a 200 JSON body that is not a completion is an invalid answer", async () => {
    fake.reset();
    fake.enqueueChat({ kind: "raw", body: "{}" }, { kind: "raw", body: '{"choices": null}' });
    const generator = createOpenAiGenerator({ ...policy, client, model: "m" });
    expect(await codeOf(generator.generate(request))).toBe("LLM_OUTPUT_INVALID");
  });

  it("an embeddings body without a vector list is an invalid answer", async () => {
    fake.reset();
    fake.enqueueEmbeddings({ kind: "raw", body: '{"data": "nope"}' });
    const embedder = createOpenAiEmbedder({ ...policy, client, model: "e" });
    expect(await codeOf(embedder.embed(["a text"]))).toBe("LLM_OUTPUT_INVALID");
    fake.enqueueEmbeddings({ kind: "raw", body: "{}" });
    expect(await codeOf(embedder.embed(["a text"]))).toBe("LLM_OUTPUT_INVALID");
  });

  it("a connection cut mid-body and a hang past the timeout are outages", async () => {
    fake.reset();
    fake.enqueueChat({ kind: "cut", bytes: 30 }, { kind: "cut", bytes: 30 });
    const generator = createOpenAiGenerator({ ...policy, client, model: "m" });
    expect(await codeOf(generator.generate(request))).toBe("LLM_UNAVAILABLE");
    fake.enqueueChat({ kind: "hang" }, { kind: "hang" });
    expect(await codeOf(generator.generate(request))).toBe("LLM_UNAVAILABLE");
  });

  it("an outage opens the shared breaker: later calls fail fast without a request, and are held", async () => {
    fake.reset();
    fake.setChatResponder(() => ({ kind: "status", status: 503 }));
    const breaker = createCircuitBreaker({ failureThreshold: 3, openMs: 60_000 });
    const generator = createOpenAiGenerator({ ...policy, client, model: "m", breaker });
    expect(await codeOf(generator.generate(request))).toBe("LLM_UNAVAILABLE"); // 2 requests
    const second = generator.generate(request).catch((e: unknown) => e); // 1 more opens it; its retry is refused
    expect(((await second) as ReflectorError).code).toBe("LLM_CIRCUIT_OPEN");
    const before = fake.chatRequests().length;
    const third = await generator.generate(request).catch((e: unknown) => e);
    expect(fake.chatRequests().length).toBe(before);
    expect(nextStep(failureOf(third), 100, true, { maxAttempts: 1, baseMs: 1, maxMs: 10 }).step).toBe(
      "pause",
    );
  });
});
