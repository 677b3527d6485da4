/**
 * Memory on realistic multi-agent failures: 130 failed tasks of 37 kinds (web browsing, coding,
 * data analysis, planning; 8–127 steps, page dumps of tens of kilobytes) that all report the same
 * generic error, "the final answer was judged incorrect", and 19 of which repeat an earlier task's
 * root cause. Each goes through the processor with default settings, the default embedder and the
 * offline generator, against the real Postgres and Redis (no Kafka: the consumer is not what is
 * measured). Prints how often a stored lesson was reused and whether it was the right one, how many
 * lessons were stored or merged, how many reflections carry an attribution and how often it names
 * the ground-truth step and agent, and the trace similarities the reuse threshold was chosen from.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { buildLlm } from "../src/composition/builders.js";
import { migrate } from "../src/adapters/postgres/migrate.js";
import { createPgReflectionStore } from "../src/adapters/postgres/pg-reflection-store.js";
import { createRedisSignatureIndex } from "../src/adapters/redis/redis-signature-index.js";
import { loadConfig } from "../src/config/config.js";
import type { ReflectionOutcome } from "../src/domain/contracts/index.js";
import { cosineSimilarity } from "../src/domain/embedding/hashing-embedding.js";
import { defaultGuardrailConfig } from "../src/domain/guardrails/guardrail-config.js";
import { failingStepOf } from "../src/domain/memory/failing-step.js";
import { traceText } from "../src/domain/memory/trace-text.js";
import { defaultQualityConfig } from "../src/domain/quality/quality-config.js";
import { untimed } from "../src/pipeline/stage-timer.js";
import { createTaskProcessor } from "../src/pipeline/task-processor.js";
import { estimateMessagesTokens } from "../src/adapters/llm/token-estimate.js";
import { TaskCompletedV1 } from "../src/domain/contracts/index.js";
import { bigTrace, multiAgentFailures } from "../test/support/corpus/multi-agent-failures.js";
import { helpfulModel, startFakeOpenAiServer } from "../test/support/fake-openai-server.js";
import { cleanTenant, databaseUrl, redisUrl, report, withDeadline, type BenchResult } from "./support.js";

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const spread = (values: number[]) =>
  `p10 ${quantile(values, 0.1).toFixed(2)} · p50 ${quantile(values, 0.5).toFixed(2)} · p90 ${quantile(values, 0.9).toFixed(2)} · max ${Math.max(...values).toFixed(2)}`;

export async function benchMemory(): Promise<BenchResult> {
  return withDeadline("memory", 900_000, run);
}

async function run(): Promise<BenchResult> {
  await migrate({ databaseUrl });
  // Default settings, unless MEMORY_* variables or an embedder are given to measure others.
  const memoryEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => k.startsWith("MEMORY_") || k.startsWith("REFLECTOR_EMBEDDING"),
    ),
  );
  const config = loadConfig({ ...memoryEnv, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl });
  const { generator, embedder, answerEvaluator } = buildLlm(config);
  const tenantId = `bench-memory-${randomUUID().slice(0, 8)}`;
  const corpus = multiAgentFailures({ tenantId });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const redis = new Redis(redisUrl);
  let generatorCalls = 0;
  const processor = createTaskProcessor({
    store: createPgReflectionStore(pool, { embeddingModel: embedder.name }),
    index: createRedisSignatureIndex(redis, { keyPrefix: `bench-${tenantId}` }),
    generator: {
      name: generator.name,
      generate: (request) => {
        generatorCalls += 1;
        return generator.generate(request);
      },
    },
    embedder,
    answerEvaluator,
    clock: { now: () => new Date() },
    timer: untimed,
    quality: { ...defaultQualityConfig, maxAttempts: config.quality.maxAttempts },
    guardrails: defaultGuardrailConfig,
    mode: config.mode,
    memory: config.memory,
  });

  try {
    // 1. The trace similarities the reuse threshold rests on: same root cause vs different ones.
    const vectors = await embedder.embed(corpus.map((c) => traceText(c.event, failingStepOf(c.event))));
    const same: number[] = [];
    const different: number[] = [];
    for (let i = 0; i < corpus.length; i += 1)
      for (let j = 0; j < i; j += 1) {
        const a = vectors[i];
        const b = vectors[j];
        if (!a || !b) continue;
        (corpus[i]?.causeId === corpus[j]?.causeId ? same : different).push(cosineSimilarity(a, b));
      }
    const threshold = config.memory.reuseMinSimilarity;
    const wrongAbove = different.filter((s) => s >= threshold).length;
    const sameAbove = same.filter((s) => s >= threshold).length;

    // 2. The corpus through the processor, in order.
    const started = performance.now();
    const lessonCauses = new Map<string, Set<string>>();
    let reused = 0;
    let reusedRight = 0;
    let merged = 0;
    // Merges against the ground truth: into a lesson of the same root cause, or of another one,
    // with the similarity of the new trace to the trace the lesson was first written for.
    const lessonSource = new Map<string, number[]>();
    const mergeSources = { same: [] as number[], mixed: [] as number[] };
    let attributed = 0;
    let stepRight = 0;
    let actorRight = 0;
    let recurrencesReused = 0;
    const actions = new Map<string, number>();
    const seenCauses = new Set<string>();
    let recurrences = 0;
    for (const [traceIndex, trace] of corpus.entries()) {
      const result = await processor.process(trace.event);
      const outcome = result.outputs.find((o) => o.role !== "loopDecision")?.value as
        ReflectionOutcome | undefined;
      if (!outcome) throw new Error(`no outcome for ${trace.event.eventId}`);
      const action = outcome.memory?.action ?? "unknown";
      actions.set(action, (actions.get(action) ?? 0) + 1);
      const recurrence = seenCauses.has(trace.causeId);
      if (recurrence) recurrences += 1;
      seenCauses.add(trace.causeId);
      if (outcome.reflectionId) {
        const causes = lessonCauses.get(outcome.reflectionId) ?? new Set<string>();
        if (action === "reuse") {
          reused += 1;
          if (causes.has(trace.causeId)) reusedRight += 1;
          if (recurrence) recurrencesReused += 1;
        }
        if (action === "update" || action === "noop") {
          merged += 1;
          const source = lessonSource.get(outcome.reflectionId);
          const vector = vectors[traceIndex];
          const sourceSimilarity = source && vector ? cosineSimilarity(vector, source) : Number.NaN;
          (causes.has(trace.causeId) ? mergeSources.same : mergeSources.mixed).push(sourceSimilarity);
        }
        const vector = vectors[traceIndex];
        if (action === "add" && vector) lessonSource.set(outcome.reflectionId, vector);
        causes.add(trace.causeId);
        lessonCauses.set(outcome.reflectionId, causes);
      }
      const attribution = outcome.reflection.attribution;
      if (attribution) {
        attributed += 1;
        if (attribution.stepIndex === trace.failingStepIndex) stepRight += 1;
        if (attribution.actor === trace.failingActor) actorRight += 1;
      }
    }
    const seconds = (performance.now() - started) / 1000;

    // 3. The largest trace (130 steps, ~340 KB, one 80,000-character step) through the same
    // processor with the OpenAI adapter against a local OpenAI-compatible server.
    const big = bigTrace({ tenantId });
    const bigBytes = Buffer.byteLength(JSON.stringify(big.event));
    const bigEvent = TaskCompletedV1.parse(big.event); // the contract cuts the oversized step
    const fake = await startFakeOpenAiServer({ chat: helpfulModel });
    let bigLine: string;
    try {
      const llm = buildLlm(
        loadConfig({
          DATABASE_URL: databaseUrl,
          REDIS_URL: redisUrl,
          REFLECTOR_GENERATOR: "openai",
          OPENAI_BASE_URL: fake.url,
          REFLECTOR_MODEL: "bench-model",
        }),
      );
      const bigProcessor = createTaskProcessor({
        store: createPgReflectionStore(pool, { embeddingModel: embedder.name }),
        index: createRedisSignatureIndex(redis, { keyPrefix: `bench-${tenantId}-big` }),
        generator: llm.generator,
        embedder,
        answerEvaluator,
        clock: { now: () => new Date() },
        timer: untimed,
        quality: defaultQualityConfig,
        guardrails: defaultGuardrailConfig,
        mode: config.mode,
        memory: config.memory,
      });
      const bigOutcome = (await bigProcessor.process(bigEvent)).outputs.find((o) => o.role !== "loopDecision")
        ?.value as ReflectionOutcome | undefined;
      const prompts = fake.chatRequests().map((body) => estimateMessagesTokens(body.messages));
      bigLine =
        `largest trace: ${String(bigEvent.events.length)} steps, ${(bigBytes / 1024).toFixed(0)} KB, longest step ` +
        `${String(Math.max(...big.event.events.map((e) => e.content.length)))} chars → verdict ${bigOutcome?.verdict ?? "none"}, ` +
        `${String(prompts.length)} chat call(s), prompt ≈ ${prompts.map(String).join(", ")} tokens (budget ${String(config.openai.promptMaxTokens)}), ` +
        `attribution step ${String(bigOutcome?.reflection.attribution?.stepIndex ?? "none")} (truth ${String(big.failingStepIndex)})`;
    } finally {
      await fake.close();
    }
    const lessons = await pool.query<{ n: string; causes: string }>(
      "SELECT count(*) AS n FROM reflections WHERE tenant_id = $1",
      [tenantId],
    );
    const stored = Number(lessons.rows[0]?.n ?? 0);
    const mixed = [...lessonCauses.values()].filter((c) => c.size > 1).length;
    const n = corpus.length;
    const reuseShare = reused / n;
    const attributionShare = attributed / n;
    return {
      name: "Memory on multi-agent failures sharing one generic error",
      lines: [
        `corpus: ${String(n)} failed tasks, ${String(new Set(corpus.map((c) => c.family)).size)} kinds, ${String(recurrences)} repeat an earlier root cause; error message for all: "${corpus[0]?.event.error?.message ?? ""}"`,
        `embedder ${embedder.name}, generator ${generator.name}, reuse threshold ${threshold.toFixed(2)}, merge threshold ${config.memory.mergeMinSimilarity.toFixed(2)}`,
        `trace similarity, same root cause (${String(same.length)} pairs): ${spread(same)}`,
        `trace similarity, different root causes (${String(different.length)} pairs): ${spread(different)}`,
        `  at the threshold: ${String(sameAbove)}/${String(same.length)} same-cause pairs reach it, ${String(wrongAbove)}/${String(different.length)} different-cause pairs do`,
        `memory actions: ${[...actions].map(([a, c]) => `${a} ${String(c)}`).join(", ")}`,
        `reused lessons: ${String(reused)}/${String(n)} = ${(100 * reuseShare).toFixed(1)} % (right cause ${String(reusedRight)}/${String(reused)}; recurrences reused ${String(recurrencesReused)}/${String(recurrences)})`,
        `lessons stored ${String(stored)}, merged into a stored one ${String(merged)}, lessons holding more than one root cause ${String(mixed)}`,
        `merges into a lesson of the same root cause ${String(mergeSources.same.length)}, of another root cause ${String(mergeSources.mixed.length)}`,
        ...(mergeSources.same.length
          ? [
              `  trace similarity to the lesson's source trace, same-cause merges: ${spread(mergeSources.same)}`,
            ]
          : []),
        ...(mergeSources.mixed.length
          ? [
              `  trace similarity to the lesson's source trace, mixed-cause merges: ${spread(mergeSources.mixed)}`,
            ]
          : []),
        `generator calls ${String(generatorCalls)}; ${(n / seconds).toFixed(1)} events/s`,
        bigLine,
        `attribution on ${String(attributed)}/${String(n)} = ${(100 * attributionShare).toFixed(1)} %; ground-truth step ${String(stepRight)}/${String(n)}, agent ${String(actorRight)}/${String(n)}`,
      ],
      ratio: reuseShare,
      goal: "reused ≤ 0.20 and attribution ≥ 0.90",
      met: reuseShare <= 0.2 && attributionShare >= 0.9,
    };
  } finally {
    await cleanTenant(tenantId);
    await pool.end();
    redis.disconnect();
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchMemory());
  process.exit(0);
}
