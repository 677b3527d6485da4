import OpenAI from "openai";
import { createOpenAiGenerator } from "../src/adapters/llm/openai-generator.js";
import { createApp } from "../src/composition/app.js";
import type { Verdict } from "../src/domain/contracts/index.js";
import {
  helpfulModel,
  replayModel,
  startFakeOpenAiServer,
  type FakeReply,
} from "../test/support/fake-openai-server.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { exampleRecordings, recordedAnswers, type Recording } from "../test/support/recorded-answers.js";
import { loadRealFailures, realLogsDir } from "./real-logs/real-logs.js";
import {
  benchEvent,
  benchSetup,
  cleanTenant,
  deleteTopics,
  phaseMeans,
  produceEvents,
  report,
  silentLogger,
  stageMeans,
  startCounter,
  type BenchResult,
} from "./support.js";

const model = "bench-model";

/**
 * LLM-bound events/s on ONE partition: every event has a new signature, so every event needs a
 * reflection from a local OpenAI-compatible server that answers after a fixed latency. Compared
 * with the ideal in-flight ÷ latency and with a plain one-at-a-time eachMessage consumer.
 */
export async function benchLlmBound(
  events = Number(process.env.BENCH_LLM_EVENTS ?? 400),
  latencyMs = Number(process.env.BENCH_LLM_LATENCY_MS ?? 500),
  inFlight = Number(process.env.BENCH_LLM_IN_FLIGHT ?? 16),
): Promise<BenchResult> {
  const fake = await startFakeOpenAiServer({ chat: helpfulModel, latencyMs });
  const setup = await benchSetup("llm", 1, {
    REFLECTOR_GENERATOR: "openai",
    OPENAI_BASE_URL: fake.url,
    REFLECTOR_MODEL: model,
    CONSUMER_MAX_IN_FLIGHT: String(inFlight),
    CONSUMER_MAX_IN_FLIGHT_PER_PARTITION: String(inFlight),
  });
  const { kafka, config, tenantId } = setup;
  await produceEvents(
    kafka,
    config.topics.taskCompleted,
    Array.from({ length: events }, (_, i) => benchEvent(tenantId, i, i)),
    0,
  );

  // 1. Plain consumer: one message at a time, one LLM call each, then produce, then next.
  const baselineEvents = Math.min(events, Math.max(10, Math.round(5000 / latencyMs)));
  const client = new OpenAI({ apiKey: "unused", baseURL: fake.url, maxRetries: 0 });
  const baselineCounter = await startCounter(kafka, [setup.pipeTopic]);
  const producer = kafka.producer();
  await producer.connect();
  const plain = kafka.consumer({ groupId: `bench-plain-${setup.id}` });
  await plain.connect();
  await plain.subscribe({ topics: [config.topics.taskCompleted], fromBeginning: true });
  let seen = 0;
  await plain.run({
    eachMessage: async ({ message }) => {
      if (seen >= baselineEvents) return;
      seen += 1;
      const answer = await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: message.value?.toString() ?? "" }],
      });
      await producer.send({
        topic: setup.pipeTopic,
        messages: [{ key: message.key, value: answer.choices[0]?.message.content ?? "" }],
      });
    },
  });
  await baselineCounter.waitFor(baselineEvents, 120_000);
  const plainRate = baselineCounter.rateAfter(1);
  await plain.disconnect();
  await producer.disconnect();
  await baselineCounter.stop();

  // 2. Reflector.
  fake.reset();
  const decisions = await startCounter(kafka, [config.topics.loopDecision]);
  const app = createApp(config, silentLogger);
  await app.start();
  await decisions.waitFor(events, 600_000);
  // From the end of the first wave of in-flight completions to the last (see rateAfter).
  const rate = decisions.rateAfter(inFlight);
  const calls = fake.chatRequests().length;
  // Where an event's time goes besides the model's latency: each stage's mean, and the phases.
  const stages = await stageMeans(app);
  const phases = await phaseMeans(app);
  await app.stop();
  await decisions.stop();
  await fake.close();
  await cleanTenant(tenantId);
  await deleteTopics(setup);

  const ideal = inFlight / (latencyMs / 1000);
  const ratio = rate / ideal;
  return {
    name: `LLM-bound throughput (1 partition, ${String(latencyMs)} ms LLM latency, in-flight ${String(inFlight)})`,
    lines: [
      `events ${String(events)}, all new signatures; LLM chat calls ${String(calls)} (${(calls / events).toFixed(2)}/event)`,
      `plain eachMessage consumer (${String(baselineEvents)} events)  ${plainRate.toFixed(1)} events/s`,
      `reflector                                  ${rate.toFixed(1)} events/s (${(rate / plainRate).toFixed(1)}× the plain consumer)`,
      `ideal in-flight ÷ latency                  ${ideal.toFixed(1)} events/s`,
      `mean stage times    ${stages}`,
      `mean phase times    ${phases}`,
    ],
    ratio,
    goal: "≥ 0.9 × in-flight ÷ latency",
    met: ratio >= 0.9,
  };
}

/**
 * Chat calls per new failure, with default settings (up to 3 attempts per reflection) and a model
 * that names a pattern it cannot prove yet, as real models do: the improvement loop must not
 * retry what no rewrite can fix. Most failures repeat known ones, which memory answers without
 * a call.
 */
export async function benchLlmCalls(
  events = Number(process.env.BENCH_CALLS_EVENTS ?? 2000),
  signatures = Number(process.env.BENCH_CALLS_SIGNATURES ?? 100),
): Promise<BenchResult> {
  const fake = await startFakeOpenAiServer({ chat: helpfulModel, latencyMs: 20 });
  const setup = await benchSetup("calls", 6, {
    REFLECTOR_GENERATOR: "openai",
    OPENAI_BASE_URL: fake.url,
    REFLECTOR_MODEL: model,
  });
  const { kafka, config, tenantId } = setup;
  // Each signature first appears once, then repeats at random positions later in the stream.
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const stream = Array.from({ length: events }, (_, i) =>
    benchEvent(tenantId, i, i < signatures ? i : Math.floor(random() * signatures)),
  );
  await produceEvents(kafka, config.topics.taskCompleted, stream);
  const decisions = await startCounter(kafka, [config.topics.loopDecision]);
  const app = createApp(config, silentLogger);
  await app.start();
  await decisions.waitFor(events, 600_000);
  const calls = fake.chatRequests().length;
  await app.stop();
  await decisions.stop();
  await fake.close();
  await cleanTenant(tenantId);
  await deleteTopics(setup);
  const ratio = calls / signatures;
  return {
    name: "LLM chat calls per new failure (defaults, a model that names patterns)",
    lines: [
      `events ${String(events)}, new signatures ${String(signatures)} (${((100 * signatures) / events).toFixed(1)}% new)`,
      `LLM chat calls ${String(calls)} = ${(calls / events).toFixed(3)} per event`,
    ],
    ratio,
    goal: "chat calls ≤ 1.1 × new failures",
    met: ratio <= 1.1,
  };
}

/** The odd first answers real models give, each followed by the recorded answer if asked again. */
const oddFirstAnswers: Record<string, (content: string) => FakeReply> = {
  refusal: () => ({ kind: "completion", content: "I'm sorry, but I can't help with analysing this trace." }),
  "refusal (API field)": () => ({ kind: "completion", content: "", refusal: "I can't help with that." }),
  "cut at the token limit": (content) => ({
    kind: "completion",
    content: content.slice(0, Math.floor(content.length / 2)),
    finishReason: "length",
  }),
  "patterns: []": (content) => {
    const object = JSON.parse(content.slice(content.indexOf("{"), content.lastIndexOf("}") + 1)) as object;
    return { kind: "completion", content: JSON.stringify({ ...object, patterns: [] }) };
  },
};

/**
 * The same failures when the model's first answer is one of the odd ones: a refusal or an answer
 * cut at the token limit (the generator repairs once; the recorded answer comes back), or the
 * recorded answer with no patterns (what a model told to name a pattern only once seen three
 * times often writes). One line per kind: chat calls per new failure, and how many were stored.
 * `BENCH_ODD_ANSWERS=0` leaves this part out.
 */
async function benchOddFirstAnswers(recordings: readonly Recording[]): Promise<string[]> {
  const lines: string[] = [];
  for (const [kind, odd] of Object.entries(oddFirstAnswers)) {
    const answered = new Set<string>();
    const fake = await startFakeOpenAiServer({
      chat: replayModel(recordings, {
        answerOf: (r) => {
          if (kind === "patterns: []") return odd(r.answer.content);
          const first = !answered.has(r.event.eventId);
          answered.add(r.event.eventId);
          return first ? odd(r.answer.content) : { kind: "completion", content: r.answer.content };
        },
      }),
    });
    const client = new OpenAI({ apiKey: "unused", baseURL: fake.url, maxRetries: 0 });
    const generator = createOpenAiGenerator({ client, model, timeoutMs: 10_000, maxRetries: 0 });
    let stored = 0;
    for (const [i, recording] of recordings.entries()) {
      const fakes = createFakeStore();
      const processor = createOfflineProcessor(
        { store: fakes.store, index: createFakeIndex().index },
        { generator },
      );
      await processor.process({ ...recording.event, tenantId: `odd-${String(i)}` });
      if (fakes.reflections.size > 0) stored += 1;
    }
    const calls = fake.chatRequests().length;
    await fake.close();
    lines.push(
      `first answer ${kind.padEnd(24)} ${String(recordings.length)} failures, ${String(calls)} chat calls = ${(calls / Math.max(1, recordings.length)).toFixed(2)} per failure, ${String(stored)} stored`,
    );
  }
  return lines;
}

/**
 * Chat calls per new failure when the model is a capable one: every failure that a capable model's
 * answer was recorded for (the examples' failures, and the real logs' when `REFLECTOR_REAL_LOGS_DIR`
 * is set), each new, through the processor with default settings — the judge, the improvement loop
 * (up to 3 attempts), the memory — and the `openai` generator against the local server replaying
 * the recorded answers as they were written (plain, fenced, prose around, extra keys). The stores
 * are the in-memory fakes and the embedder is the hashing one: the number of calls does not depend
 * on Kafka, and every failure here is new.
 */
export async function benchLlmCallsRecorded(env: NodeJS.ProcessEnv = process.env): Promise<BenchResult> {
  const recordings: (Recording & { source: string })[] = exampleRecordings().map((r) => ({
    ...r,
    source: "examples",
  }));
  const where = realLogsDir(env);
  if ("dir" in where) {
    const byId = new Map(loadRealFailures(where.dir).map((f) => [f.id, f]));
    for (const answer of recordedAnswers("real")) {
      const failure = byId.get(answer.id);
      if (failure) recordings.push({ event: failure.event, answer, source: failure.source });
    }
  }
  const fake = await startFakeOpenAiServer({ chat: replayModel(recordings) });
  const client = new OpenAI({ apiKey: "unused", baseURL: fake.url, maxRetries: 0 });
  const generator = createOpenAiGenerator({ client, model, timeoutMs: 10_000, maxRetries: 0 });
  const lines: string[] = [];
  let calls = 0;
  let attempts = 0;
  const reasons = new Map<string, number>();
  const bySource = new Map<
    string,
    { failures: number; calls: number; verdicts: Map<Verdict | "none", number> }
  >();
  for (const [i, recording] of recordings.entries()) {
    const processor = createOfflineProcessor(
      { store: createFakeStore().store, index: createFakeIndex().index },
      { generator },
    );
    const before = fake.chatRequests().length;
    // A tenant of its own: every failure is new.
    const result = await processor.process({ ...recording.event, tenantId: `recorded-${String(i)}` });
    const used = fake.chatRequests().length - before;
    calls += used;
    const s = bySource.get(recording.source) ?? {
      failures: 0,
      calls: 0,
      verdicts: new Map<Verdict | "none", number>(),
    };
    s.failures += 1;
    s.calls += used;
    const verdict = result.verdict ?? "none";
    s.verdicts.set(verdict, (s.verdicts.get(verdict) ?? 0) + 1);
    bySource.set(recording.source, s);
    attempts += result.generatorCalls;
    for (const output of result.outputs) {
      const violations = (output.value as { violations?: unknown }).violations;
      if (!Array.isArray(violations)) continue;
      for (const v of violations) {
        // "Shallow reflection: depth=0.40 < 0.7…" → "Shallow reflection"
        const kind = String(v).split(/[:'(]/)[0]?.trim() ?? "";
        reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
      }
    }
  }
  await fake.close();
  for (const [source, s] of bySource)
    lines.push(
      `${source.padEnd(34)} failures ${String(s.failures).padStart(3)}  chat calls ${String(s.calls).padStart(3)}  verdicts ${[
        ...s.verdicts,
      ]
        .map(([v, n]) => `${v} ${String(n)}`)
        .join(", ")}`,
    );
  if (!("dir" in where)) lines.push(`real-log recordings left out: ${where.absent}`);
  lines.push(
    `generator attempts (improvement loop) ${String(attempts)}; chat calls per attempt ${(calls / Math.max(1, attempts)).toFixed(2)}`,
    `violations in the published outcomes: ${[...reasons]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${String(n)}`)
      .join(", ")}`,
  );
  const ratio = calls / Math.max(1, recordings.length);
  lines.push(
    `all: ${String(recordings.length)} new failures, ${String(calls)} chat calls = ${ratio.toFixed(2)} per new failure`,
  );
  if (env.BENCH_ODD_ANSWERS !== "0") lines.push(...(await benchOddFirstAnswers(recordings)));
  return {
    name: "LLM chat calls per new failure with a capable model's recorded answers (defaults)",
    lines,
    ratio,
    goal: "chat calls ≤ 1.1 × new failures",
    met: ratio <= 1.1,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  const which = process.argv[2] ?? "all";
  if (which === "all" || which === "bound") report(await benchLlmBound());
  if (which === "all" || which === "calls") report(await benchLlmCalls());
  if (which === "all" || which === "calls-recorded") report(await benchLlmCallsRecorded());
  process.exit(0);
}
