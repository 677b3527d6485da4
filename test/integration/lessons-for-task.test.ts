import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createHashingEmbedder } from "../../src/adapters/embedding/hashing-embedder.js";
import { pgClientConfig } from "../../src/adapters/postgres/pg-connection.js";
import { createPgFeedbackStore } from "../../src/adapters/postgres/pg-feedback-store.js";
import { createPgLessonStore } from "../../src/adapters/postgres/pg-lesson-store.js";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import { createRedisSignatureIndex } from "../../src/adapters/redis/redis-signature-index.js";
import type { LoopDecision } from "../../src/domain/contracts/index.js";
import { createLessonIndex } from "../../src/features/lessons/lessons-for-task-index.js";
import { createLessonsForTask } from "../../src/features/lessons/lessons-for-task.js";
import { createOfflineProcessor } from "../support/fakes.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * Lessons that reach the agents, on real Postgres and Redis: a failure's rerun decision carries
 * its lesson, the lesson is found for a new task by meaning, and reruns that fail the same way
 * again count against it until it is withheld and no longer served, with no human vote.
 */

const pool = new pg.Pool({
  ...pgClientConfig({ databaseUrl: inject("databaseUrl"), sslCaFile: undefined }),
  max: 3,
});
const redis = new Redis(inject("redisUrl"), { lazyConnect: true });
const embedder = createHashingEmbedder();
const tenantId = `lessons-${randomUUID().slice(0, 8)}`;
const processor = createOfflineProcessor(
  {
    store: createPgReflectionStore(pool, { embeddingModel: embedder.name }),
    index: createRedisSignatureIndex(redis, { keyPrefix: `test-${tenantId}` }),
  },
  { embedder, appliedOutcomes: createPgFeedbackStore(pool) },
);
const clock = { now: () => new Date() };
const index = createLessonIndex({
  source: createPgLessonStore(pool, { clock }),
  embeddingModel: embedder.name,
  clock,
  refreshMs: 0,
});
const lessons = createLessonsForTask({ index, embedder, clock, floor: 0.05 });

afterAll(async () => {
  await pool.query("DELETE FROM reflections WHERE tenant_id = $1", [tenantId]);
  await pool.end();
  redis.disconnect();
});

const decisionOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role === "loopDecision")?.value as LoopDecision;

describe("lessons for a task and applied outcomes (Postgres, Redis)", () => {
  it("carries the lesson on the rerun, serves it for a new task, and withholds it after it keeps failing", async () => {
    const first = await processor.process(taskEvent({ tenantId, eventId: "evt-0", loopId: "loop-0" }));
    const decision = decisionOf(first.outputs);
    expect(decision.decision).toBe("rerun");
    const lessonId = decision.lessons[0]?.reflectionId ?? "";
    expect(lessonId).not.toBe("");

    const asked = { task: "Fetch the order history of a customer for analysis", limit: 5, minImportance: 0 };
    const found = await lessons.forTask(tenantId, asked);
    expect(found.lessons.map((l) => l.reflectionId)).toEqual([lessonId]);
    expect(found.lessons[0]?.prompt).toBe(decision.lessons[0]?.prompt);
    const unrelated = await lessons.forTask(tenantId, { ...asked, task: "Translate a poem into French" });
    expect(unrelated.lessons).toEqual([]);

    // Three reruns in a row fail the same way: each counts once against the lesson carried to it.
    let parent = decision;
    for (let i = 1; i <= 3; i += 1) {
      const rerun = taskEvent({
        tenantId,
        eventId: `evt-${String(i)}`,
        loopId: parent.newLoopId ?? "",
        rerunOf: parent.loopId,
      });
      const result = await processor.process(rerun);
      // A replayed event id counts nothing twice.
      expect((await processor.process(rerun)).status).toBe("replayed");
      parent = decisionOf(result.outputs);
      if (i === 1) {
        // Counted and visible with the lesson once the index has read the change.
        await lessons.forTask(tenantId, asked);
        await index.settled(tenantId);
        const served = await lessons.forTask(tenantId, asked);
        expect(served.lessons[0]?.applied).toEqual({ helped: 0, failedAgain: 1 });
      }
    }
    const row = await pool.query<{
      applied_failed: number;
      applied_helped: number;
      effective_quality: number;
    }>("SELECT applied_failed, applied_helped, effective_quality FROM reflections WHERE id = $1", [lessonId]);
    expect(row.rows[0]?.applied_failed).toBe(3);
    expect(row.rows[0]?.applied_helped).toBe(0);
    expect(row.rows[0]?.effective_quality).toBeCloseTo(0.3, 5);
    const outcomes = await pool.query(
      "SELECT event_id, result FROM lesson_outcomes WHERE reflection_id = $1 ORDER BY event_id",
      [lessonId],
    );
    expect(outcomes.rows).toEqual(
      [1, 2, 3].map((i) => ({ event_id: `evt-${String(i)}`, result: "failed_again" })),
    );

    // Withheld: after the index refreshes it is no longer served.
    await lessons.forTask(tenantId, asked);
    await index.settled(tenantId);
    expect((await lessons.forTask(tenantId, asked)).lessons).toEqual([]);
  });
});

describe("an operator's approval for wide serving (Postgres)", () => {
  const approvalTenant = `${tenantId}-approval`;
  afterAll(async () => {
    await pool.query("DELETE FROM reflections WHERE tenant_id = $1", [approvalTenant]);
  });

  it("serves a lesson one trace wrote to other tasks once an operator approved it; the first approval stands", async () => {
    const first = await processor.process(
      taskEvent({ tenantId: approvalTenant, eventId: "evt-a0", loopId: "loop-a0" }),
    );
    const lessonId = decisionOf(first.outputs).lessons[0]?.reflectionId ?? "";
    expect(lessonId).not.toBe("");
    const strict = createLessonsForTask({ index, embedder, clock, floor: 0.05, minOccurrences: 2 });
    const asked = { task: "Fetch the order history of a customer for analysis", limit: 5, minImportance: 0 };
    expect((await strict.forTask(approvalTenant, asked)).lessons).toEqual([]);

    const store = createPgLessonStore(pool, { clock });
    expect(await store.approveForServing(tenantId, lessonId, "api-key:other", new Date())).toBeNull();
    const at = new Date("2026-12-05T04:00:00.000Z");
    expect(await store.approveForServing(approvalTenant, lessonId, "api-key:first", at)).toEqual({
      approvedAt: at,
      approvedBy: "api-key:first",
      occurrences: 1,
    });
    const again = await store.approveForServing(approvalTenant, lessonId, "api-key:second", new Date());
    expect(again?.approvedBy).toBe("api-key:first");
    // The index answers from what it holds and refreshes behind: the approval shows at its next read.
    const served = await waitFor(
      async () => {
        const ids = (await strict.forTask(approvalTenant, asked)).lessons.map((l) => l.reflectionId);
        return ids.length > 0 && ids;
      },
      { timeoutMs: 10_000, what: "the approved lesson served" },
    );
    expect(served).toEqual([lessonId]);
  });
});
