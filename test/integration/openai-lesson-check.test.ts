import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { describe, expect, inject, it } from "vitest";
import { createHashingEmbedder } from "../../src/adapters/embedding/hashing-embedder.js";
import { createCircuitBreaker } from "../../src/adapters/llm/circuit-breaker.js";
import { FairSlots } from "../../src/adapters/llm/fair-slots.js";
import { lessonCheckMessages } from "../../src/adapters/llm/lesson-check-prompt.js";
import { createLlmAdapters } from "../../src/adapters/llm/llm-adapters.js";
import { createOpenAiLessonCheck } from "../../src/adapters/llm/openai-lesson-check.js";
import { estimateChatTokens } from "../../src/adapters/llm/token-estimate.js";
import { createRedisTenantBudget, createTenantBudget } from "../../src/adapters/redis/tenant-token-budget.js";
import { lessonCheckWithinBudget } from "../../src/pipeline/lesson-check.js";
import { createLessonIndex } from "../../src/features/lessons/lessons-for-task-index.js";
import { createLessonsForTask } from "../../src/features/lessons/lessons-for-task.js";
import { useFakeOpenAiServer } from "../support/fake-openai-suite.js";
import { lessonRow, lessonsNow } from "../support/lessons.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The lesson check's OpenAI adapter against a local OpenAI-compatible server: what it sends, how
 * it reads the answers real models give, and that an outage or an unusable answer leaves the
 * lessons to meaning (null) instead of failing the agent's request.
 */

const server = useFakeOpenAiServer();

function check(
  over: {
    timeoutMs?: number;
    deadlineMs?: number;
    breaker?: ReturnType<typeof createCircuitBreaker>;
    slots?: FairSlots;
  } = {},
) {
  const client = new OpenAI({ baseURL: server().url, apiKey: "test-key", maxRetries: 0 });
  return createOpenAiLessonCheck({
    client,
    model: "fake-check-model",
    timeoutMs: over.timeoutMs ?? 2_000,
    deadlineMs: over.deadlineMs ?? 2_000,
    maxRetries: 0,
    ...(over.breaker ? { breaker: over.breaker } : {}),
    ...(over.slots ? { slots: over.slots } : {}),
    randomToken: () => "n0nce",
  });
}

const candidates = [
  {
    advice: "Before cancel_reservation, check the grounds the policy allows.",
    adjustments: ["check insurance"],
    tags: ["cancellation"],
  },
  {
    advice: "Upgrade a basic economy cabin before changing its flights.",
    adjustments: [],
    tags: ["flight-change"],
  },
];
const task = { task: "Cancel my flight, I am sick and have insurance", tools: ["cancel_reservation"] };
const content = (text: string) => ({ kind: "completion" as const, content: text });

describe("the model's lesson check against a local OpenAI-compatible server", () => {
  it("sends one JSON-mode request with the task and the numbered lessons, and reads the numbers", async () => {
    server().enqueueChat(content('{"apply": [1]}'));
    expect(await check().applies("tenant-a", task, candidates)).toEqual([0]);
    const [body] = server().chatRequests();
    expect(body).toMatchObject({ model: "fake-check-model", response_format: { type: "json_object" } });
    expect((body as { max_completion_tokens?: number }).max_completion_tokens).toBe(256);
    const user = JSON.stringify(body?.messages);
    expect(user).toContain("lessons-data-n0nce");
    expect(user).toContain("basic economy");
    expect(user).toContain("cancel_reservation");
  });

  it("reads the answers real models give around the object", async () => {
    server().enqueueChat(
      content('```json\n{"apply": [2, 1]}\n```'),
      content('Both apply here: {"apply": ["1"], "why": "it is a cancellation"}'),
      content('{"apply": []}'),
    );
    const c = check();
    expect(await c.applies("t", task, candidates)).toEqual([1, 0]);
    expect(await c.applies("t", task, candidates)).toEqual([0]);
    expect(await c.applies("t", task, candidates)).toEqual([]);
  });

  it("gives null for a refusal, a cut answer, prose without an object, an error or no answer in time", async () => {
    server().enqueueChat(
      { kind: "completion", content: "", refusal: "I can't help with that." },
      { kind: "completion", content: '{"apply": [1,', finishReason: "length" },
      content("None of these lessons seem relevant to me."),
      { kind: "status", status: 500, body: { error: { message: "boom" } } },
      { kind: "hang" },
    );
    const c = check({ timeoutMs: 300 });
    for (let i = 0; i < 5; i += 1) expect(await c.applies("t", task, candidates)).toBeNull();
    expect(server().chatRequests()).toHaveLength(5);
  });

  it("answers null at its deadline while queued for a slot, and the abandoned request never goes", async () => {
    const slots = new FairSlots(1);
    const release = await slots.acquire("other-check");
    const started = Date.now();
    expect(await check({ slots, deadlineMs: 300 }).applies("t", task, candidates)).toBeNull();
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(2_000);
    expect(slots.waiting).toBe(0);
    server().enqueueChat(content('{"apply": [1]}'));
    release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server().chatRequests()).toHaveLength(0);
    expect(slots.inUse).toBe(0);
  });

  it("aborts a request in flight when the agent goes away", async () => {
    server().enqueueChat({ kind: "hang" });
    const gone = new AbortController();
    const asked = check({ timeoutMs: 10_000, deadlineMs: 10_000 }).applies(
      "t",
      task,
      candidates,
      gone.signal,
    );
    await waitFor(() => server().chatRequests().length === 1, { timeoutMs: 2_000 });
    const started = Date.now();
    gone.abort();
    expect(await asked).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("answers by meaning at once when its queue is full", async () => {
    const slots = new FairSlots(1);
    server().enqueueChat(
      { kind: "delay", ms: 400, then: content('{"apply": [1]}') },
      content('{"apply": [2]}'),
    );
    const c = createOpenAiLessonCheck({
      client: new OpenAI({ baseURL: server().url, apiKey: "test-key", maxRetries: 0 }),
      model: "fake-check-model",
      timeoutMs: 2_000,
      deadlineMs: 2_000,
      maxRetries: 0,
      slots,
      maxQueued: 1,
      randomToken: () => "n0nce",
    });
    const first = c.applies("t", task, candidates);
    await waitFor(() => slots.inUse === 1, { timeoutMs: 1_000 });
    const second = c.applies("t", task, candidates);
    await waitFor(() => slots.waiting === 1, { timeoutMs: 1_000 });
    const started = Date.now();
    expect(await c.applies("t", task, candidates)).toBeNull();
    expect(Date.now() - started).toBeLessThan(100);
    expect(await first).toEqual([0]);
    expect(await second).toEqual([1]);
  });

  it("asks no model about no candidates, and none while the circuit is open", async () => {
    expect(await check().applies("t", task, [])).toEqual([]);
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 60_000 });
    server().enqueueChat({ kind: "status", status: 503, body: { error: { message: "overloaded" } } });
    const c = check({ breaker });
    expect(await c.applies("t", task, candidates)).toBeNull();
    expect(await c.applies("t", task, candidates)).toBeNull();
    expect(server().chatRequests()).toHaveLength(1);
  });

  it("serves what the model picked through lessons for a task, and meaning when it cannot answer", async () => {
    const embedder = createHashingEmbedder();
    const now = lessonsNow;
    const texts = [
      "Cancel the customer's flight reservation after checking the refund policy and insurance",
      "Change the customer's basic economy flight to a later flight the same day",
    ];
    const rows = await Promise.all(
      texts.map(async (text, i) =>
        lessonRow(`lesson-${String(i)}`, (await embedder.embed([text]))[0] ?? [], {
          strategyText: `Strategy for: ${text}`,
        }),
      ),
    );
    const clock = { now: () => now };
    const forTask = createLessonsForTask({
      index: createLessonIndex({
        source: {
          lessonVersion: () => Promise.resolve({ count: rows.length, latest: now }),
          lessonVectors: () => Promise.resolve(rows),
        },
        embeddingModel: embedder.name,
        clock,
      }),
      embedder,
      clock,
      floor: 0.05,
      check: check(),
    });
    const body = { task: "Cancel a flight reservation", limit: 5, minImportance: 0.5 };
    // The model is shown the lessons nearest first; it picks the one about changing flights.
    server().enqueueChat(content('{"apply": [2]}'));
    const picked = await forTask.forTask("t", body);
    expect(picked.checkedBy).toBe("model");
    const shown = JSON.stringify(server().chatRequests()[0]?.messages);
    expect(shown.indexOf("Cancel the customer")).toBeLessThan(shown.indexOf("Change the customer"));
    expect(picked.lessons.map((l) => l.reflectionId)).toEqual(["lesson-1"]);
    server().enqueueChat({ kind: "status", status: 500, body: { error: { message: "boom" } } });
    const fallback = await forTask.forTask("t", body);
    expect(fallback.checkedBy).toBe("meaning");
    expect(fallback.lessons[0]?.reflectionId).toBe("lesson-0");
  });
});

describe("the lesson check is isolated from the pipeline's model calls", () => {
  const settings = (url: string) => ({
    generator: "openai" as const,
    embeddings: "hashing" as const,
    lessonCheck: "model" as const,
    lessonCheckTimeoutMs: 5_000,
    openai: {
      apiKey: "test-key",
      baseUrl: url,
      model: "fake-model",
      embeddingModel: undefined,
      timeoutMs: 5_000,
      maxRetries: 0,
      circuitFailureThreshold: 5,
      circuitOpenMs: 60_000,
    },
  });

  it("never opens the pipeline's circuit, whatever the check's answers", async () => {
    const changes: string[] = [];
    const { lessonCheck } = createLlmAdapters(settings(server().url), {
      onCircuitChange: ({ state }) => changes.push(state),
    });
    server().enqueueChat(...Array.from({ length: 8 }, () => content("<html>not an answer</html>")));
    for (let i = 0; i < 8; i += 1) expect(await lessonCheck?.applies("t", task, candidates)).toBeNull();
    // Its own circuit opened after 5 and stopped asking; the pipeline's never moved.
    expect(server().chatRequests()).toHaveLength(5);
    expect(changes).toEqual([]);
  });

  it("never spends more than the tenant's budget under 60 concurrent checks", async () => {
    const budgetTokens = 5_000;
    const counter = new RateLimiterMemory({ points: budgetTokens, duration: 60 });
    const budget = createTenantBudget({ counter, overBudget: "heuristic" });
    // Eight lessons of about a thousand characters: some 1,500 tokens a check, as in the review.
    const many = Array.from({ length: 8 }, (_, i) => ({
      advice: `Lesson ${String(i)}: ${"check the booking's fare rules before changing it. ".repeat(20)}`,
      adjustments: ["confirm the fare class with the user"],
      tags: ["booking"],
    }));
    const promptTokens = estimateChatTokens(lessonCheckMessages(task, many, "n0nce"));
    server().enqueueChat(
      ...Array.from({ length: 60 }, () => ({
        kind: "delay" as const,
        ms: 50,
        then: { kind: "completion" as const, content: '{"apply": [1]}', promptTokens, completionTokens: 8 },
      })),
    );
    const { lessonCheck } = createLlmAdapters(settings(server().url), { spend: budget });
    if (!lessonCheck) throw new Error("no lesson check");
    // As the composition root wires it: admitted by the spend gate first.
    const gated = lessonCheckWithinBudget(lessonCheck, budget);
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => gated.applies("tenant-a", task, many)),
    );
    const spent = (await counter.get("tenant-a"))?.consumedPoints ?? 0;
    const asked = server().chatRequests().length;
    expect(asked).toBeGreaterThan(0);
    expect(answers.filter((a) => a !== null)).toHaveLength(asked);
    expect(asked * (promptTokens + 8)).toBeLessThanOrEqual(budgetTokens);
    expect(spent).toBeLessThanOrEqual(budgetTokens);
  });

  it("never spends more than the tenant's budget under 60 concurrent checks on two pods sharing Redis", async () => {
    const budgetTokens = 5_000;
    const keyPrefix = `test-${randomUUID().slice(0, 8)}`;
    const pods = [new Redis(inject("redisUrl")), new Redis(inject("redisUrl"))];
    try {
      const budgets = pods.map((redis) =>
        createRedisTenantBudget(redis, {
          keyPrefix,
          budgetTokens,
          windowMs: 60_000,
          overBudget: "heuristic",
        }),
      );
      const many = Array.from({ length: 8 }, (_, i) => ({
        advice: `Lesson ${String(i)}: ${"check the booking's fare rules before changing it. ".repeat(20)}`,
        adjustments: ["confirm the fare class with the user"],
        tags: ["booking"],
      }));
      const promptTokens = estimateChatTokens(lessonCheckMessages(task, many, "n0nce"));
      server().enqueueChat(
        ...Array.from({ length: 60 }, () => ({
          kind: "delay" as const,
          ms: 50,
          then: { kind: "completion" as const, content: '{"apply": [1]}', promptTokens, completionTokens: 8 },
        })),
      );
      // Each pod with its own adapters and gate, as each pod's composition root wires them.
      const gated = budgets.map((budget) => {
        const { lessonCheck } = createLlmAdapters(settings(server().url), { spend: budget });
        if (!lessonCheck) throw new Error("no lesson check");
        return lessonCheckWithinBudget(lessonCheck, budget);
      });
      const [podA, podB] = gated;
      if (!podA || !podB) throw new Error("two pods");
      await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? podA : podB).applies("tenant-a", task, many)),
      );
      const asked = server().chatRequests().length;
      expect(asked).toBeGreaterThan(0);
      expect(asked * (promptTokens + 8)).toBeLessThanOrEqual(budgetTokens);
      const spent = Number((await pods[0]?.get(`${keyPrefix}:llm-budget:tenant-a`)) ?? 0);
      expect(spent).toBeLessThanOrEqual(budgetTokens);
    } finally {
      for (const redis of pods) redis.disconnect();
    }
  });
});
