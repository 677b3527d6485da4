import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  buildCauseJudgePrompt,
  causeJudgePromptMaxTokens,
  createOpenAiCauseJudge,
} from "../../src/adapters/llm/openai-cause-judge.js";
import { estimateMessagesTokens } from "../../src/adapters/llm/token-estimate.js";
import type { Reflection, TaskCompleted } from "../../src/domain/contracts/index.js";
import { ReflectorError } from "../../src/domain/errors.js";
import { generateHeuristicReflection } from "../../src/domain/heuristic/generate-heuristic-reflection.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { exampleEvent } from "../support/examples.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../support/fakes.js";

/**
 * The model judge (`REFLECTOR_JUDGE=model`) against a local OpenAI-compatible server: the grade it
 * reads, the repair request, what it does with a refusal or an outage, its budget, and what the
 * pipeline stores when the model reads no cause. Needs no Kafka, Postgres or Redis.
 */

let fake: FakeOpenAiServer;
beforeAll(async () => {
  fake = await startFakeOpenAiServer();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  fake.reset();
});

const event: TaskCompleted = exampleEvent("01");
const analysis: Reflection = generateHeuristicReflection(event);
const graded = (cause: "stated" | "none", score = 0.9) =>
  JSON.stringify({ cause, grounded: true, score, reason: "reads the timeout at the query step" });

function judge() {
  const client = new OpenAI({ baseURL: fake.url, apiKey: "test-key", maxRetries: 0 });
  return createOpenAiCauseJudge({ client, model: "judge", timeoutMs: 5_000, maxRetries: 0 });
}

describe("the model judge", () => {
  it("reads a fenced grade in one request that carries the analysis and the trace as data", async () => {
    fake.enqueueChat({ kind: "completion", content: "```json\n" + graded("stated") + "\n```" });
    expect(await judge().grade(event, analysis)).toEqual({
      statesCause: true,
      grounded: true,
      score: 0.9,
      reason: "reads the timeout at the query step",
    });
    const [body] = fake.chatRequests();
    expect(fake.chatRequests()).toHaveLength(1);
    const user = String(body?.messages[1]?.content);
    expect(user).toContain("<analysis-");
    expect(user).toContain("<trace-data-");
    expect(user).toContain(JSON.stringify(analysis.reflectionText.slice(0, 60)).slice(1, -1));
  });

  it("asks once more when the answer is unusable, and reads the repaired one", async () => {
    fake.enqueueChat(
      { kind: "completion", content: "The analysis looks fine to me." },
      { kind: "completion", content: graded("none", 0.1) },
    );
    expect((await judge().grade(event, analysis))?.statesCause).toBe(false);
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it("gives no grade after a refusal and an unusable repair, so the offline reading stands", async () => {
    fake.enqueueChat(
      { kind: "completion", content: "", refusal: "I can't help with that." },
      { kind: "completion", content: '{"cause": "stated", "grounded": tr', finishReason: "length" },
    );
    expect(await judge().grade(event, analysis)).toBeNull();
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it("lets an outage surface, so the event waits rather than losing the judgement", async () => {
    fake.enqueueChat({ kind: "status", status: 503, body: { error: { message: "overloaded" } } });
    await expect(judge().grade(event, analysis)).rejects.toBeInstanceOf(ReflectorError);
  });

  it("asks nothing for a success", async () => {
    const success = { ...event, outcome: "success" as const };
    expect(await judge().grade(success, analysis)).toBeNull();
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it("keeps a request within its budget on a trace of 2,000 long steps", () => {
    const long: TaskCompleted = {
      ...event,
      events: Array.from({ length: 2_000 }, (_, i) => ({
        eventId: `step-${String(i)}`,
        type: "tool_response" as const,
        timestamp: "2026-11-20T10:00:00.000Z",
        content: `row ${String(i)} `.repeat(400),
      })),
    };
    const prompt = buildCauseJudgePrompt(long, analysis, { canary: "canary-x", nonce: "n0nce" });
    expect(
      estimateMessagesTokens([{ content: prompt.system }, { content: prompt.user }]),
    ).toBeLessThanOrEqual(causeJudgePromptMaxTokens);
  });

  it("keeps the pipeline from storing a lesson whose analysis the model reads as stating no cause", async () => {
    const run = async (cause: "stated" | "none") => {
      fake.reset();
      fake.setChatResponder(() => ({
        kind: "completion",
        content: graded(cause, cause === "stated" ? 0.9 : 0.1),
      }));
      const fakes = createFakeStore();
      const processor = createOfflineProcessor(
        { store: fakes.store, index: createFakeIndex().index },
        { causeJudge: judge() },
      );
      const result = await processor.process(event);
      return { result, stored: fakes.reflections.size, asked: fake.chatRequests().length };
    };
    const stated = await run("stated");
    const none = await run("none");
    // One request per judged attempt: the offline generator's one attempt, then as many as it retries.
    expect(stated.asked).toBe(1);
    expect(stated.stored).toBe(1);
    expect(none.asked).toBeGreaterThanOrEqual(1);
    expect(none.stored).toBe(0);
  });
});
