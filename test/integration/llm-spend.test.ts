import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import {
  helpfulModel,
  startFakeOpenAiServer,
  traceDataOf,
  type ChatBody,
  type FakeOpenAiServer,
  type FakeReply,
} from "../support/fake-openai-server.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * LLM spend limits end to end: the real pipeline (Kafka, Postgres, Redis) with the `openai`
 * generator against the local fake endpoint. Tenant A's answers are expensive (15,000 tokens each)
 * and the budget is 10,000 tokens a tenant; tenant B's are cheap. Each call reserves its estimated
 * prompt (a few thousand tokens) before it is sent, so the budget holds two of B's calls in flight. The endpoint answers slowly, so requests
 * overlap and the concurrency cap shows in how many the endpoint sees at once.
 */
let fake: FakeOpenAiServer;

/** helpfulModel, with the usage the tenant's answers cost (the task text names the tenant). */
function pricedModel(request: Parameters<typeof helpfulModel>[0]): FakeReply {
  const reply = helpfulModel(request);
  const cheap = traceDataOf(request.body as ChatBody)?.task?.description?.includes("tenant-b") ?? false;
  if (reply.kind !== "completion") return reply;
  return cheap
    ? { ...reply, promptTokens: 15, completionTokens: 5 }
    : { ...reply, promptTokens: 12_000, completionTokens: 3_000 };
}

/** A new failure of its own (distinct signature) for the tenant. */
function failureOf(tenantId: string, n: number): TaskCompleted {
  const base = taskEvent();
  return taskEvent({
    tenantId,
    task: { description: `Export report ${tenantId} batch`, goal: "Produce the quarterly report" },
    error: {
      category: "timeout_error",
      type: `export_timeout_${tenantId}_${String(n)}`,
      code: `EXPORT_${String(n)}`,
      message: `export worker ${tenantId} stage ${"abcdefghij"[n] ?? "z"} timed out`,
      context: {},
    },
    events: base.events,
  });
}

beforeAll(async () => {
  fake = await startFakeOpenAiServer({ chat: pricedModel, latencyMs: 150 });
});

afterAll(async () => {
  await fake.close();
});

/** Tenant A and tenant B, new to the database. */
function tenants(): [string, string] {
  const run = randomUUID().slice(0, 8);
  return [`tenant-a-${run}`, `tenant-b-${run}`];
}

const openAiEnv = () => ({
  REFLECTOR_GENERATOR: "openai",
  OPENAI_BASE_URL: fake.url,
  REFLECTOR_MODEL: "fake-model",
  REFLECTOR_EMBEDDINGS: "hashing",
  OPENAI_MAX_RETRIES: "0",
  LLM_MAX_CONCURRENT_CALLS: "2",
  LLM_TENANT_TOKEN_BUDGET: "10000",
});

function outcomesOf(h: Harness, tenantId: string) {
  return h.collected.filter(
    (c) =>
      (c.topic === h.config.topics.reflectionAccepted || c.topic === h.config.topics.reflectionRejected) &&
      c.value?.tenantId === tenantId,
  );
}

describe("LLM spend limits through the pipeline", () => {
  let current: Harness | undefined;

  afterEach(async () => {
    await current?.close();
    current = undefined;
  });

  it("over budget, tenant A falls back to the heuristic generator while B keeps the model; never more than the cap at once", async () => {
    const h = (current = await startHarness({ env: { ...openAiEnv(), LLM_OVER_BUDGET: "heuristic" } }));
    fake.reset();
    // Tenants of their own: the database is shared with earlier runs, which know these failures.
    const [a, b] = tenants();
    // A's first failure: admitted, and its 15,000 reported tokens spend A's budget of 10,000.
    const first = failureOf(a, 0);
    await h.publish(first);
    const firstOutputs = await h.waitForOutputs(first.eventId, 2);
    expect(firstOutputs.find((c) => c.value && "generator" in c.value)?.value).toMatchObject({
      generator: "openai",
    });
    const chatsBefore = fake.chatRequests().length;

    // Now a burst of both tenants' new failures at once.
    const burstA = [1, 2, 3, 4].map((n) => failureOf(a, n));
    const burstB = [1, 2, 3, 4, 5, 6].map((n) => failureOf(b, n));
    await Promise.all([...burstA, ...burstB].map((event) => h.publish(event)));
    for (const event of [...burstA, ...burstB]) await h.waitForOutputs(event.eventId, 2);

    const generatorOf = (event: TaskCompleted) =>
      outcomesOf(h, event.tenantId).find((c) => c.value?.sourceEventId === event.eventId)?.value?.generator;
    expect(burstA.map(generatorOf)).toEqual(["heuristic", "heuristic", "heuristic", "heuristic"]);
    expect(burstB.map(generatorOf)).toEqual(Array(6).fill("openai"));
    // Every model request of the burst was B's; A's were answered offline.
    const burstChats = fake.chatRequests().slice(chatsBefore);
    expect(burstChats.length).toBeGreaterThanOrEqual(6);
    expect(burstChats.every((body) => traceDataOf(body)?.task?.description?.includes("tenant-b"))).toBe(true);
    // Six of B's requests wanted to run together; the cap let two at a time reach the endpoint.
    expect(fake.maxConcurrent()).toBe(2);

    const metrics = await h.app.metrics.registry.metrics();
    expect(metrics).toContain(`reflector_llm_over_budget_total{tenant="${a}",action="heuristic"} 4\n`);
    expect(metrics).toContain(`reflector_llm_tenant_tokens_total{tenant="${a}"} 15000\n`);
    expect(metrics).toContain("reflector_llm_max_concurrent_calls 2\n");
  });

  it("with LLM_OVER_BUDGET=wait, A's next failure is held, not dead-lettered, and runs on the model once A's window resets", async () => {
    const h = (current = await startHarness({
      env: { ...openAiEnv(), LLM_OVER_BUDGET: "wait", LLM_TENANT_BUDGET_WINDOW_MS: "4000" },
    }));
    fake.reset();
    const [a, b] = tenants();
    const first = failureOf(a, 0);
    await h.publish(first);
    await h.waitForOutputs(first.eventId, 2);
    const spentAt = Date.now();
    const chatsBefore = fake.chatRequests().length;

    const held = failureOf(a, 1);
    const other = failureOf(b, 1);
    await h.publish(held);
    await h.publish(other);
    await waitFor(
      async () =>
        new RegExp(`reflector_llm_over_budget_total\\{tenant="${a}",action="wait"\\} [1-9]`).test(
          await h.app.metrics.registry.metrics(),
        ),
      { what: "A's event to be held" },
    );
    // Held: no model request for A until its window ends (B's may run meanwhile).
    expect(
      fake
        .chatRequests()
        .slice(chatsBefore)
        .some((body) => traceDataOf(body)?.task?.description?.includes(a)),
    ).toBe(false);

    const outputs = await h.waitForOutputs(held.eventId, 2, 45_000);
    await h.waitForOutputs(other.eventId, 2);
    // Not before the window that A spent had ended, and written by the model, not offline.
    expect(Date.now() - spentAt).toBeGreaterThan(2_500);
    expect(outputs.find((c) => c.value && "generator" in c.value)?.value).toMatchObject({
      generator: "openai",
    });
    const metrics = await h.app.metrics.registry.metrics();
    expect(metrics).toMatch(/reflector_retries_total\{code="LLM_BUDGET_EXHAUSTED"\} [1-9]/);
    expect(h.on(h.config.topics.deadLetter)).toEqual([]);
  });
});
