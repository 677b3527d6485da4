import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from "vitest";
import { createPgLessonSplitStore } from "../../src/adapters/postgres/pg-lesson-split.js";
import { createPgLessonStore } from "../../src/adapters/postgres/pg-lesson-store.js";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { decideLoop } from "../../src/domain/guardrails/decide-loop.js";
import { defaultGuardrailConfig } from "../../src/domain/guardrails/guardrail-config.js";
import type { NewReflection, ReflectionStore, UnitOfWork } from "../../src/pipeline/ports.js";
import { taskEvent } from "../support/task-events.js";

/**
 * Splitting a merge in Postgres: a lesson that three failures landed on (written for one, two
 * merged in under their own signatures) gives one of them a lesson of its own and another back to
 * no lesson; the signatures go with them, counts follow, and refusals change nothing.
 */

let pool: pg.Pool;
let store: ReflectionStore;
const embeddingModel = "test-embedder";
beforeAll(() => {
  pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 3 });
  store = createPgReflectionStore(pool, { embeddingModel });
});
afterAll(async () => {
  await pool.end();
});

function newReflection(id: string): NewReflection {
  return {
    id,
    signatureType: "evaluation_error",
    reflection: {
      reflectionText: "Step 20 booked three bags that no user message and no tool output gave.",
      strategyText: "Work out the bag count from the policy and the records.",
      importance: 0.6,
      confidence: 0.7,
      tags: ["book_reservation"],
      errorCategory: "task_failure",
      patterns: ["book_reservation with total_baggages from no source"],
      adjustments: ["add constraint: every book_reservation argument comes from the user or a tool"],
      learning: "Before `book_reservation`, work out `total_baggages` from the records.",
    },
    verdict: "accepted",
    qualityScore: 0.86,
    metrics: {
      completeness: 1,
      depthScore: 0.7,
      actionabilityScore: 1,
      patternValidity: 1,
      relevanceScore: 0.9,
      noveltyScore: 0.8,
    },
    violations: [],
    generator: "heuristic",
    attempts: 1,
    embedding: [0.6, 0.8, 0],
    sourceVector: [1, 0, 0],
  };
}

async function commit(event: TaskCompleted, signature: string, op: UnitOfWork["store"]) {
  const loop = decideLoop(
    { event, ...(await store.loopContext(event)), answerNeedsRetry: false },
    defaultGuardrailConfig,
  );
  return store.commit(
    {
      event,
      signature,
      store: op,
      loop,
      answerEvaluation: null,
      episode: event.task.description,
      judgement: null,
      decidedAt: new Date(),
      sourceRecord: null,
    },
    [],
  );
}

/** A lesson written for e1 under sig-a, with e2 (sig-b) and e3 (sig-c) merged into it. */
async function mergedLesson() {
  const tenantId = `split-${randomUUID().slice(0, 8)}`;
  const ids = [1, 2, 3].map((n) => `evt-${String(n)}-${randomUUID()}`);
  const event = (n: number) => taskEvent({ tenantId, eventId: ids[n - 1] ?? "" });
  const id = randomUUID();
  await commit(event(1), "sig-a", { kind: "insert", reflection: newReflection(id) });
  for (const [n, signature] of [
    [2, "sig-b"],
    [3, "sig-c"],
  ] as const)
    await commit(event(n), signature, {
      kind: "merge",
      reflectionId: id,
      signature,
      sourceVector: [0, 1, 0],
      replacement: null,
    });
  return { tenantId, id, ids: ids as [string, string, string] };
}

describe("splitting a merged lesson in Postgres", () => {
  it("moves a source into a lesson of its own and another back to unassigned, with their signatures", async () => {
    const { tenantId, id, ids } = await mergedLesson();
    const [e1, e2, e3] = ids;
    // A pool of one connection, as the CLI uses: the split must not wait on itself.
    const single = new pg.Pool({ connectionString: inject("databaseUrl"), max: 1 });
    onTestFinished(() => single.end());
    let tick = Date.parse("2026-11-26T15:00:00.000Z");
    const splits = createPgLessonSplitStore(single, { clock: { now: () => new Date((tick += 1000)) } });
    const lessons = createPgLessonStore(pool);

    const own = await splits.splitSources({
      tenantId,
      lessonId: id,
      eventIds: [e2],
      to: "new_lesson",
      actor: "cli:ops",
    });
    expect(own).toMatchObject({ status: "split", moved: [e2], remaining: 2, signaturesMoved: ["sig-b"] });
    const newId = own.status === "split" ? own.newLessonId : null;
    expect(newId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await lessons.sourcesOf(tenantId, id, 10))?.map((s) => s.eventId)).toEqual([e1, e3]);
    expect((await lessons.sourcesOf(tenantId, newId ?? "", 10))?.map((s) => s.eventId)).toEqual([e2]);
    // A recurrence under sig-b now finds the new lesson; sig-a and sig-c still the old one.
    expect((await store.findBySignature(tenantId, "sig-b"))?.id).toBe(newId);
    expect((await store.findBySignature(tenantId, "sig-c"))?.id).toBe(id);
    expect((await store.findBySignature(tenantId, "sig-a"))?.id).toBe(id);
    const rows = await pool.query<{
      id: string;
      occurrences: number;
      merged_signatures: string[];
      learning: string;
    }>(
      "SELECT id, occurrences, merged_signatures, learning FROM reflections WHERE tenant_id = $1 ORDER BY occurrences DESC",
      [tenantId],
    );
    expect(rows.rows).toEqual([
      { id, occurrences: 2, merged_signatures: ["sig-c"], learning: newReflection(id).reflection.learning },
      {
        id: newId,
        occurrences: 1,
        merged_signatures: ["sig-b"],
        learning: newReflection(id).reflection.learning,
      },
    ]);

    // The copy has its strategy record, like any stored lesson.
    const strategies = await pool.query<{ reflection_id: string; strategy_text: string }>(
      "SELECT reflection_id, strategy_text FROM strategies WHERE tenant_id = $1 ORDER BY reflection_id = $2 DESC",
      [tenantId, id],
    );
    const strategyText = newReflection(id).reflection.strategyText;
    expect(strategies.rows).toEqual([
      { reflection_id: id, strategy_text: strategyText },
      { reflection_id: newId, strategy_text: strategyText },
    ]);

    const back = await splits.splitSources({ tenantId, lessonId: id, eventIds: [e3], to: "unassigned" });
    expect(back).toMatchObject({
      status: "split",
      newLessonId: null,
      remaining: 1,
      signaturesMoved: ["sig-c"],
    });
    expect(await store.findBySignature(tenantId, "sig-c")).toBeNull();
    const e3Row = await pool.query<{ reflection_id: string | null }>(
      "SELECT reflection_id FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
      [tenantId, e3],
    );
    expect(e3Row.rows).toEqual([{ reflection_id: null }]);
    const old = await pool.query<{ occurrences: number; merged_signatures: string[] }>(
      "SELECT occurrences, merged_signatures FROM reflections WHERE id = $1",
      [id],
    );
    expect(old.rows).toEqual([{ occurrences: 1, merged_signatures: [] }]);

    // The audit: who, when, which sources moved, from which lesson to which; newest first.
    const audit = await splits.listSplits(tenantId, { limit: 10 });
    expect(audit.map(({ id: _id, ...rest }) => rest)).toEqual([
      {
        lessonId: id,
        newLessonId: null,
        to: "unassigned",
        moved: [e3],
        signaturesMoved: ["sig-c"],
        remaining: 1,
        actor: "unknown",
        at: new Date("2026-11-26T15:00:02.000Z"),
      },
      {
        lessonId: id,
        newLessonId: newId,
        to: "new_lesson",
        moved: [e2],
        signaturesMoved: ["sig-b"],
        remaining: 2,
        actor: "cli:ops",
        at: new Date("2026-11-26T15:00:01.000Z"),
      },
    ]);
    expect(
      (await splits.listSplits(tenantId, { lessonId: newId ?? "", limit: 10 })).map((r) => r.moved),
    ).toEqual([[e2]]);
    expect(await splits.listSplits(tenantId, { limit: 1 })).toHaveLength(1);
    expect(await splits.listSplits("someone-else", { limit: 10 })).toEqual([]);
  });

  it("refuses another tenant's lesson, events that are not its sources and all of its sources, changing nothing", async () => {
    const { tenantId, id, ids } = await mergedLesson();
    const splits = createPgLessonSplitStore(pool);
    const before = await pool.query(
      "SELECT event_id, reflection_id FROM processed_events WHERE tenant_id = $1 ORDER BY event_id",
      [tenantId],
    );
    expect(
      await splits.splitSources({
        tenantId: "someone-else",
        lessonId: id,
        eventIds: [ids[1]],
        to: "unassigned",
      }),
    ).toEqual({
      status: "not_found",
    });
    expect(
      await splits.splitSources({ tenantId, lessonId: randomUUID(), eventIds: [ids[1]], to: "unassigned" }),
    ).toEqual({
      status: "not_found",
    });
    expect(
      await splits.splitSources({
        tenantId,
        lessonId: id,
        eventIds: [ids[1], "evt-unknown"],
        to: "new_lesson",
      }),
    ).toEqual({
      status: "not_sources",
      missing: ["evt-unknown"],
    });
    expect(
      await splits.splitSources({ tenantId, lessonId: id, eventIds: [...ids], to: "new_lesson" }),
    ).toEqual({
      status: "all_sources",
      sources: 3,
    });
    const after = await pool.query(
      "SELECT event_id, reflection_id FROM processed_events WHERE tenant_id = $1 ORDER BY event_id",
      [tenantId],
    );
    expect(after.rows).toEqual(before.rows);
    const count = await pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM reflections WHERE tenant_id = $1",
      [tenantId],
    );
    expect(count.rows[0]?.n).toBe("1");
    // A refused split is not recorded.
    expect(await splits.listSplits(tenantId, { limit: 10 })).toEqual([]);
  });
});
