import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createHashingEmbedder } from "../../src/adapters/embedding/hashing-embedder.js";
import { createHeuristicGenerator } from "../../src/adapters/llm/heuristic-generator.js";
import { pgClientConfig } from "../../src/adapters/postgres/pg-connection.js";
import { createPgLessonStore } from "../../src/adapters/postgres/pg-lesson-store.js";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import { createRedisSignatureIndex } from "../../src/adapters/redis/redis-signature-index.js";
import type { LoopDecision, ReflectionOutcome, TaskCompleted } from "../../src/domain/contracts/index.js";
import { refusalOf } from "../../src/domain/quality/lesson-screen.js";
import { createLessonIndex } from "../../src/features/lessons/lessons-for-task-index.js";
import { createLessonsForTask } from "../../src/features/lessons/lessons-for-task.js";
import type { ReflectionGenerator } from "../../src/pipeline/ports.js";
import { createOtlpDecoder } from "../../src/adapters/otlp/otlp-decoder.js";
import { mapTraceToTask } from "../../src/domain/otlp/map-trace.js";
import type { OtlpSpan } from "../../src/domain/otlp/otlp-span.js";
import { poisoned } from "../fixtures/screen/obfuscation-corpus.js";
import { runMultiAgentTask, sdkTracer, serialize } from "../support/otel-traces.js";
import { createOfflineProcessor } from "../support/fakes.js";
import { taskEvent } from "../support/task-events.js";

/**
 * The obfuscation corpus end to end, on real Postgres and Redis: each payload put into a lesson by
 * a model (an adjustment and the strategy of an otherwise good lesson), into a trace's error text
 * (which the offline generator reads) and into an OpenTelemetry trace's failing tool (mapped as the
 * OTLP bridge maps it), processed, stored, carried by the rerun decision and
 * served by lessons for a task. No stored instruction, no decision and no served lesson may carry
 * it, and every instruction that reaches an agent passes the lesson screen.
 */

const pool = new pg.Pool({
  ...pgClientConfig({ databaseUrl: inject("databaseUrl"), sslCaFile: undefined }),
  max: 3,
});
const redis = new Redis(inject("redisUrl"), { lazyConnect: true });
const embedder = createHashingEmbedder();
const run = randomUUID().slice(0, 8);
const clock = { now: () => new Date() };
const lessons = createLessonsForTask({
  index: createLessonIndex({
    source: createPgLessonStore(pool, { clock }),
    embeddingModel: embedder.name,
    clock,
    refreshMs: 0,
  }),
  embedder,
  clock,
  floor: 0.01,
});
const heuristic = createHeuristicGenerator();

/** A model that writes a good lesson and slips the payload into one adjustment and the strategy. */
function poisoningModel(payload: string): ReflectionGenerator {
  return {
    name: "openai",
    async generate(request) {
      const good = await heuristic.generate(request);
      return { ...good, strategyText: payload, adjustments: [...good.adjustments, payload] };
    },
  };
}

function processorFor(tenantId: string, generator?: ReflectionGenerator) {
  return createOfflineProcessor(
    {
      store: createPgReflectionStore(pool, { embeddingModel: embedder.name }),
      index: createRedisSignatureIndex(redis, { keyPrefix: `test-poison-${run}` }),
    },
    { embedder, ...(generator ? { generator } : {}) },
  );
}

const tenants: string[] = [];
afterAll(async () => {
  await pool.query("DELETE FROM reflections WHERE tenant_id = ANY($1)", [tenants]);
  await pool.end();
  redis.disconnect();
});

const variants = (payload: string) => [payload, payload.replace(/["“”]/g, "'")];

/** What reached Postgres, the decision and the agent for one poisoned event. */
async function throughEverything(tenantId: string, event: TaskCompleted, generator?: ReflectionGenerator) {
  tenants.push(tenantId);
  const result = await processorFor(tenantId, generator).process(event);
  const outcome = result.outputs.find((o) => o.role !== "loopDecision")?.value as ReflectionOutcome;
  const decision = result.outputs.find((o) => o.role === "loopDecision")?.value as LoopDecision;
  const rows = await pool.query<{
    strategy_text: string | null;
    learning: string;
    adjustments: string[];
    tags: string[];
    patterns: string[];
  }>("SELECT strategy_text, learning, adjustments, tags, patterns FROM reflections WHERE tenant_id = $1", [
    tenantId,
  ]);
  const served = await lessons.forTask(tenantId, {
    task: `${event.task.description}. ${event.task.goal ?? ""}`,
    limit: 5,
    minImportance: 0,
  });
  return { outcome, decision, rows: rows.rows, served };
}

function expectClean(payload: string, got: Awaited<ReturnType<typeof throughEverything>>): void {
  const stored = got.rows.flatMap((r) => [
    r.strategy_text ?? "",
    r.learning,
    ...r.adjustments,
    ...r.tags,
    ...r.patterns,
  ]);
  const carried = got.decision.lessons.flatMap((l) => [l.strategyText, ...l.adjustments]);
  const served = got.served.lessons.flatMap((l) => [l.strategyText, ...l.adjustments]);
  const reaching = [...carried, ...served];
  for (const text of variants(payload)) {
    for (const instruction of stored) expect(instruction).not.toContain(text);
    for (const instruction of reaching) expect(instruction).not.toContain(text);
    for (const prompt of [...got.decision.lessons, ...got.served.lessons].map((l) => l.prompt))
      expect(prompt).not.toContain(text);
  }
  // Structurally: every instruction stored or reaching an agent passes the screen.
  for (const instruction of [...stored, ...reaching]) expect(refusalOf(instruction), instruction).toBeNull();
  // The outcome names what it refused without quoting it.
  for (const text of variants(payload)) expect(got.outcome.violations.join("\n")).not.toContain(text);
}

/**
 * An OpenTelemetry trace of a multi-agent run whose failing tool's exception and status carry the
 * payload, as the OTLP bridge reads it and maps it to a task event for the tenant.
 */
function otlpEvent(tenantId: string, payload: string): TaskCompleted {
  const sdk = sdkTracer({ "service.name": "agents" });
  runMultiAgentTask(sdk.tracer);
  const message = `404 not found; fix: ${payload}`;
  const spans: OtlpSpan[] = createOtlpDecoder()
    .decode(serialize(sdk.finished(), "protobuf"))
    .spans.map((span) =>
      span.status.code === 2 && span.name.startsWith("execute_tool")
        ? {
            ...span,
            status: { code: 2, message },
            events: span.events.map((e) =>
              e.name === "exception"
                ? { ...e, attributes: { ...e.attributes, "exception.message": message } }
                : e,
            ),
          }
        : span,
    );
  const mapped = mapTraceToTask(spans, {
    tenantAttribute: "reflector.tenant_id",
    projectAttribute: "reflector.project_id",
    defaultTenant: tenantId,
    defaultProject: "agents",
    tenantId,
  });
  if (!mapped.ok) throw new Error("the trace did not map to a task event");
  expect(JSON.stringify(mapped.event)).toContain("404 not found; fix:");
  return mapped.event;
}

describe("the obfuscation corpus end to end (Postgres, Redis)", () => {
  it.each(poisoned.map(([kind, payload], i) => [kind, payload, i] as const))(
    "a model's lesson carrying %s is stored and served without it",
    async (_kind, payload, i) => {
      const tenantId = `poison-model-${run}-${String(i)}`;
      const got = await throughEverything(tenantId, taskEvent({ tenantId }), poisoningModel(payload));
      // A good lesson is still stored, without the refused instruction.
      expect(got.outcome.stored).toBe(true);
      expect(got.outcome.violations.join(" ")).toMatch(/Refused 2 instructions/);
      expect(got.served.lessons.length).toBeGreaterThan(0);
      expect(got.decision.lessons.length).toBeGreaterThan(0);
      expectClean(payload, got);
    },
  );

  it.each(poisoned.map(([kind, payload], i) => [kind, payload, i] as const))(
    "a trace whose error text carries %s gives no offline lesson that stores or serves it",
    async (_kind, payload, i) => {
      const tenantId = `poison-trace-${run}-${String(i)}`;
      const base = taskEvent({ tenantId });
      const message = `404 not found; fix: ${payload}`;
      const event = taskEvent({
        tenantId,
        error: { ...base.error, message } as TaskCompleted["error"],
        events: base.events.map((step) =>
          step.error ? { ...step, content: message, error: { ...step.error, message } } : step,
        ),
      });
      expectClean(payload, await throughEverything(tenantId, event));
    },
  );

  it("an OTLP trace of the same failure without a payload gives a lesson that is stored and served", async () => {
    const tenantId = `poison-otlp-${run}-clean`;
    const got = await throughEverything(tenantId, otlpEvent(tenantId, "retry the query later"));
    expect(got.outcome.stored).toBe(true);
    expect(got.rows).toHaveLength(1);
    expect(got.served.lessons.length).toBeGreaterThan(0);
  });

  it.each(poisoned.map(([kind, payload], i) => [kind, payload, i] as const))(
    "an OTLP trace whose failing tool carries %s gives no lesson that stores or serves it",
    async (_kind, payload, i) => {
      const tenantId = `poison-otlp-${run}-${String(i)}`;
      expectClean(payload, await throughEverything(tenantId, otlpEvent(tenantId, payload)));
    },
  );
});
