import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOpenAiGenerator } from "../../src/adapters/llm/openai-generator.js";
import { parseReflectionOutput, StrictReflection } from "../../src/adapters/llm/reflection-output.js";
import { ReflectorError } from "../../src/domain/errors.js";
import type { GenerationRequest } from "../../src/pipeline/ports.js";
import {
  replayModel,
  startFakeOpenAiServer,
  type ChatBody,
  type FakeOpenAiServer,
  type FakeReply,
} from "../support/fake-openai-server.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../support/fakes.js";
import { exampleRecordings, type Recording } from "../support/recorded-answers.js";

/**
 * The `openai` generator on what a capable model really answered to its exact requests on the
 * examples' failures (test/fixtures/recorded-answers/), replayed by the local OpenAI-compatible
 * server, and on the odd answers real models give: fences, prose around the object, extra keys,
 * a refusal, an answer cut at the token limit. Needs no Kafka, Postgres or Redis.
 */

const recordings = exampleRecordings();
let fake: FakeOpenAiServer;

beforeAll(async () => {
  fake = await startFakeOpenAiServer({ chat: replayModel(recordings) });
});

afterAll(async () => {
  await fake.close();
});

afterEach(() => {
  fake.reset();
  fake.setChatResponder(replayModel(recordings));
});

function request(recording: Recording): GenerationRequest {
  return {
    event: recording.event,
    attempt: 1,
    violations: [],
    missingFields: [],
    insights: [],
    answerEvaluation: null,
  };
}

function generator() {
  const client = new OpenAI({ baseURL: fake.url, apiKey: "test-key", maxRetries: 0 });
  return createOpenAiGenerator({ client, model: "recorded", timeoutMs: 5_000, maxRetries: 0 });
}

/** The recorded answer, parsed as the generator parses it (for what it should keep). */
function expected(recording: Recording) {
  const parsed = parseReflectionOutput(
    recording.answer.content,
    { canary: "canary-unused", nonce: "unused" },
    "",
    recording.event,
  );
  if (!parsed.ok) throw new Error(`${recording.answer.id}: ${parsed.problems.join("; ")}`);
  return parsed.reflection;
}

const first = (): Recording => {
  const recording = recordings.find((r) => r.answer.form === "json");
  if (!recording) throw new Error("no plain recorded answer");
  return recording;
};

describe("the openai generator on a capable model's recorded answers", () => {
  it("has recordings of every form a real model writes", () => {
    expect(recordings.length).toBeGreaterThanOrEqual(10);
    expect(new Set(recordings.map((r) => r.answer.form))).toEqual(
      new Set(["json", "fenced", "prose-around", "extra-keys"]),
    );
  });

  it("turns every recorded answer into a reflection in one call, keeping the analysis and the lesson", async () => {
    const g = generator();
    for (const recording of recordings) {
      const before = fake.chatRequests().length;
      const reflection = await g.generate(request(recording));
      expect(fake.chatRequests().length - before, recording.answer.id).toBe(1);
      expect(StrictReflection.safeParse(reflection).success).toBe(true);
      const want = expected(recording);
      // Both the analysis of this run and the lesson for the kind of task reach storage as given.
      expect(reflection.reflectionText).toBe(want.reflectionText);
      expect(reflection.learning).toBe(want.learning);
      expect(reflection.strategyText).toBe(want.strategyText);
      expect(reflection.attribution?.stepIndex, recording.answer.id).toBeTypeOf("number");
    }
    // Calls per new failure at the generator: exactly one each.
    expect(fake.chatRequests()).toHaveLength(recordings.length);
  });

  it("finds the answer by the trace, whatever canary and nonce the request drew", async () => {
    const recording = first();
    await generator().generate(request(recording));
    await generator().generate(request(recording));
    const [a, b] = fake.chatRequests() as [ChatBody, ChatBody];
    expect(a.messages[0]?.content).not.toBe(b.messages[0]?.content);
  });

  it("reads an answer wrapped in prose or a fence, with extra keys, in one call", async () => {
    const recording = first();
    const object = JSON.parse(recording.answer.content) as Record<string, unknown>;
    const wrappings = [
      `Here is my reflection on the run.\n\n${recording.answer.content}\n\nLet me know if you need more.`,
      `\`\`\`json\n${recording.answer.content}\n\`\`\``,
      `Sure — {as asked}:\n\`\`\`json\n${JSON.stringify({ ...object, reasoning: "I read every step." })}\n\`\`\`\nDone.`,
    ];
    for (const content of wrappings) {
      fake.reset();
      fake.enqueueChat({ kind: "completion", content });
      const reflection = await generator().generate(request(recording));
      expect(fake.chatRequests()).toHaveLength(1);
      expect(reflection.learning).toBe(expected(recording).learning);
      expect(JSON.stringify(reflection)).not.toContain("I read every step");
    }
  });

  it("stores the lesson of every recorded answer rewritten with `patterns: []`, one call per failure", async () => {
    // Told to name a pattern only once it is seen three times, a real model often names none.
    const withoutPatterns = (recording: { answer: { content: string } }): FakeReply => {
      const content = recording.answer.content;
      const object = JSON.parse(content.slice(content.indexOf("{"), content.lastIndexOf("}") + 1)) as Record<
        string,
        unknown
      >;
      return { kind: "completion", content: JSON.stringify({ ...object, patterns: [] }) };
    };
    fake.setChatResponder(replayModel(recordings, { answerOf: withoutPatterns }));
    const fakes = createFakeStore();
    const processor = createOfflineProcessor(
      { store: fakes.store, index: createFakeIndex().index },
      { generator: generator() },
    );
    for (const [i, recording] of recordings.entries()) {
      const before = fake.chatRequests().length;
      const result = await processor.process({ ...recording.event, tenantId: `no-patterns-${String(i)}` });
      expect(result.verdict, recording.answer.id).not.toBe("rejected");
      expect(fake.chatRequests().length - before, recording.answer.id).toBe(1);
    }
    const stored = [...fakes.reflections.values()];
    expect(stored).toHaveLength(recordings.length);
    for (const recording of recordings)
      expect(JSON.stringify(stored)).toContain(JSON.stringify(expected(recording).learning).slice(1, -1));
  });

  it("repairs a refusal or an answer cut at the token limit once, then takes the model's answer", async () => {
    const recording = first();
    const odd: FakeReply[] = [
      { kind: "completion", content: "I'm sorry, but I can't help with analysing this trace." },
      { kind: "completion", content: "", refusal: "I can't help with that." },
      {
        kind: "completion",
        content: recording.answer.content.slice(0, 400),
        finishReason: "length",
      },
    ];
    for (const reply of odd) {
      fake.reset();
      fake.enqueueChat(reply);
      const reflection = await generator().generate(request(recording));
      expect(fake.chatRequests()).toHaveLength(2);
      expect(reflection.learning).toBe(expected(recording).learning);
    }
  });

  it("fails with LLM_OUTPUT_INVALID when the model refuses twice", async () => {
    fake.setChatResponder(() => ({ kind: "completion", content: "I cannot assist with that request." }));
    const err = await generator()
      .generate(request(first()))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ReflectorError);
    expect((err as ReflectorError).code).toBe("LLM_OUTPUT_INVALID");
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it("stores the lesson and the analysis the model gave, through the processor", async () => {
    const recording = first();
    const fakes = createFakeStore();
    const processor = createOfflineProcessor(
      { store: fakes.store, index: createFakeIndex().index },
      { generator: generator() },
    );
    const result = await processor.process({ ...recording.event, tenantId: "recorded-store" });
    expect(result.verdict).not.toBe("rejected");
    const stored = [...fakes.reflections.values()];
    expect(stored).toHaveLength(1);
    const want = expected(recording);
    expect(JSON.stringify(stored[0])).toContain(JSON.stringify(want.learning).slice(1, -1));
  });
});
