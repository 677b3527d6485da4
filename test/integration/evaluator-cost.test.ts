import { describe, expect, it } from "vitest";
import { createLlmAdapters } from "../../src/adapters/llm/llm-adapters.js";
import { loadConfig } from "../../src/config/config.js";
import { useFakeOpenAiServer } from "../support/fake-openai-suite.js";
import { taskEvent } from "../support/task-events.js";

/**
 * The answer self-evaluation is cost-controlled by default: its own lighter model when one is
 * named, at most 500 output tokens (the specification's cap), and a bounded request whatever the
 * agent sent.
 */

const server = useFakeOpenAiServer();

const scores = {
  kind: "completion" as const,
  content: JSON.stringify({
    confidence: 0.8,
    relevance: 0.9,
    completeness: 0.7,
    issues: [],
    improvements: [],
  }),
};

function evaluatorFrom(env: Record<string, string>) {
  const config = loadConfig({
    REFLECTOR_EMBEDDINGS: "hashing",
    REFLECTOR_GENERATOR: "openai",
    REFLECTOR_MODEL: "fake-large-model",
    OPENAI_BASE_URL: server().url,
    OPENAI_MAX_RETRIES: "0",
    ...env,
  });
  return createLlmAdapters(config).answerEvaluator;
}

const longAnswer = `The Enterprise plan includes single sign-on. ${"It also includes audit logs and SCIM. ".repeat(2_000)}It costs 25 dollars per seat.`;
const event = taskEvent({
  outcome: "partial",
  error: undefined,
  task: {
    description: "Answer a billing question from the pricing page",
    query: "Which plan includes single sign-on, and how much does it cost per seat?",
    answer: longAnswer,
  },
});

describe("the answer self-evaluation's cost, by default", () => {
  it("asks for at most 500 tokens, on the lighter model when one is named", async () => {
    server().enqueueChat(scores);
    const result = await evaluatorFrom({ REFLECTOR_EVALUATOR_MODEL: "fake-light-model" }).evaluate(event);
    expect(result).toMatchObject({ evaluator: "openai", quality: 0.8 });
    const [body] = server().chatRequests();
    expect(body?.model).toBe("fake-light-model");
    expect(body?.max_completion_tokens).toBe(500);
  });

  it("keeps the request bounded: a 76,000-character answer is sent as its head and tail", async () => {
    expect(longAnswer.length).toBeGreaterThan(70_000);
    server().enqueueChat(scores);
    await evaluatorFrom({}).evaluate(event);
    const [body] = server().chatRequests();
    const sent = JSON.stringify(body?.messages);
    expect(sent.length).toBeLessThan(16_000);
    expect(sent).toContain("single sign-on");
    expect(sent).toContain("25 dollars per seat");
    expect(sent).toMatch(/cut [\d,]+ characters/);
    // Without a lighter model named, the generator's model answers, still capped.
    expect(body?.model).toBe("fake-large-model");
    expect(body?.max_completion_tokens).toBe(500);
  });

  it("takes another cap from REFLECTOR_EVALUATOR_MAX_TOKENS", async () => {
    server().enqueueChat(scores);
    await evaluatorFrom({ REFLECTOR_EVALUATOR_MAX_TOKENS: "800" }).evaluate(event);
    expect(server().chatRequests()[0]?.max_completion_tokens).toBe(800);
  });
});
