import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPgLessonRetrievals,
  lessonRetrievalRetentionMs,
  maxRetrievedPerLoop,
} from "../../src/adapters/postgres/pg-lesson-retrievals.js";
import type { LoopDecision, TaskCompleted } from "../../src/domain/contracts/index.js";
import { createPgLessonStore } from "../../src/adapters/postgres/pg-lesson-store.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * A later task that retrieved a lesson through `POST /api/v1/lessons/for-task` (with the loop id it
 * then publishes its completion under) counts for or against that lesson, through the whole
 * service: the HTTP route remembers the retrieval in Postgres, the processor reads it back when
 * the task's event arrives from Kafka, and the event counts once, also when it is delivered again.
 */
let h: Harness;
let apiKey = "";
let tenantId = "";

beforeAll(async () => {
  const id = Math.random().toString(36).slice(2, 10);
  apiKey = `retrievals-key-${id}`;
  tenantId = `retrievals-${id}`;
  h = await startHarness({ env: { API_KEYS: `${apiKey}:${tenantId}:read` } });
});

afterAll(async () => {
  await h.pool.query("DELETE FROM reflections WHERE tenant_id = $1", [tenantId]);
  await h.close();
});

async function lessonsFor(task: string, loopId: string) {
  const port = (h.app.http.server.address() as AddressInfo).port;
  const res = await fetch(`http://127.0.0.1:${String(port)}/api/v1/lessons/for-task`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ task, loop_id: loopId, min_relevance: 0.05, min_importance: 0 }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { lessons: { reflection_id: string }[]; recorded_for: string | null };
}

/** Publishes the event and waits until the consumer group committed past it. */
async function processed(event: TaskCompleted) {
  const { partition, offset } = await h.publish(event);
  const admin = h.kafka.admin();
  await admin.connect();
  try {
    await waitFor(
      async () => {
        const [topic] = await admin.fetchOffsets({
          groupId: h.config.kafka.groupId,
          topics: [h.config.topics.taskCompleted],
        });
        const done = topic?.partitions.find((p) => p.partition === partition)?.offset ?? "-1";
        return BigInt(done) > BigInt(offset ?? "0");
      },
      { timeoutMs: 60_000, what: `the commit past ${event.eventId}` },
    );
  } finally {
    await admin.disconnect();
  }
}

const countsOf = async (lessonId: string) =>
  (
    await h.pool.query<{ applied_helped: number; applied_failed: number }>(
      "SELECT applied_helped, applied_failed FROM reflections WHERE id = $1",
      [lessonId],
    )
  ).rows[0];

describe("a later task that retrieved a lesson (HTTP, Kafka, Postgres)", () => {
  it("counts helped on its success and failed again on the same failure, once each through redelivery", async () => {
    const first = taskEvent({ tenantId, eventId: "evt-first", loopId: "loop-first" });
    await h.publish(first);
    const [decisionRecord] = await waitFor(
      () => {
        const found = h.on(h.config.topics.loopDecision, (c) => c.value?.sourceEventId === first.eventId);
        return found.length > 0 ? found : undefined;
      },
      { timeoutMs: 60_000, what: "the first failure's decision" },
    );
    const lessonId = (decisionRecord?.value as unknown as LoopDecision).lessons[0]?.reflectionId ?? "";
    expect(lessonId).not.toBe("");
    // The index reads the task the lesson was written for (its words weigh in the ranking).
    const model = await h.pool.query<{ m: string }>(
      "SELECT embedding_model AS m FROM reflections WHERE id = $1",
      [lessonId],
    );
    const rows = await createPgLessonStore(h.pool, { clock: { now: () => new Date() } }).lessonVectors(
      tenantId,
      model.rows[0]?.m ?? "",
      null,
    );
    expect(rows.find((r) => r.id === lessonId)?.task).toBe(
      `${first.task.description}\n${first.task.goal ?? ""}`,
    );

    // A new task (not a rerun) asks for lessons with the loop id it will publish under.
    const asked = await lessonsFor("Fetch the order history of a customer for analysis", "loop-later-ok");
    expect(asked.recorded_for).toBe("loop-later-ok");
    expect(asked.lessons.map((l) => l.reflection_id)).toContain(lessonId);

    const success = taskEvent({
      tenantId,
      eventId: "evt-later-ok",
      loopId: "loop-later-ok",
      outcome: "success",
      error: undefined,
      occurredAt: "2026-11-20T10:05:00.000Z",
    });
    await processed(success);
    expect(await countsOf(lessonId)).toEqual({ applied_helped: 1, applied_failed: 0 });
    // The same event again (a producer's retry): committed once, counted once.
    await processed(success);
    expect(await countsOf(lessonId)).toEqual({ applied_helped: 1, applied_failed: 0 });

    // Another task retrieves it and fails the same way: failed again, for that lesson.
    await lessonsFor("Fetch the order history of a customer for analysis", "loop-later-fails");
    const failure = taskEvent({
      tenantId,
      eventId: "evt-later-fails",
      loopId: "loop-later-fails",
      occurredAt: "2026-11-20T10:06:00.000Z",
    });
    await processed(failure);
    await processed(failure);
    expect(await countsOf(lessonId)).toEqual({ applied_helped: 1, applied_failed: 1 });

    // A task that retrieved nothing for its loop counts nothing.
    await processed(
      taskEvent({
        tenantId,
        eventId: "evt-unasked",
        loopId: "loop-unasked",
        outcome: "success",
        error: undefined,
        occurredAt: "2026-11-20T10:07:00.000Z",
      }),
    );
    expect(await countsOf(lessonId)).toEqual({ applied_helped: 1, applied_failed: 1 });
    const outcomes = await h.pool.query(
      "SELECT event_id, result FROM lesson_outcomes WHERE tenant_id = $1 ORDER BY event_id",
      [tenantId],
    );
    expect(outcomes.rows).toEqual([
      { event_id: "evt-later-fails", result: "failed_again" },
      { event_id: "evt-later-ok", result: "helped" },
    ]);
  });

  it("keeps retrievals per tenant, bounded per loop, and forgets them after the retention", async () => {
    const retrievals = createPgLessonRetrievals(h.pool);
    const lesson = await h.pool.query<{ id: string }>(
      "SELECT id FROM reflections WHERE tenant_id = $1 LIMIT 1",
      [tenantId],
    );
    const lessonId = lesson.rows[0]?.id ?? "";
    expect(lessonId).not.toBe("");
    const now = new Date();

    // Another tenant naming this tenant's lesson records nothing, and reads nothing of this tenant.
    await retrievals.record(`${tenantId}-other`, "loop-x", [lessonId], now);
    expect(await retrievals.lessonsRetrievedBy(`${tenantId}-other`, "loop-x", now)).toEqual([]);
    await retrievals.record(tenantId, "loop-x", [lessonId], now);
    expect(await retrievals.lessonsRetrievedBy(`${tenantId}-other`, "loop-x", now)).toEqual([]);
    expect(await retrievals.lessonsRetrievedBy(tenantId, "loop-x", now)).toEqual([lessonId]);

    // Older than the retention: not read, and deleted by the tenant's next recording.
    const old = new Date(now.getTime() - lessonRetrievalRetentionMs - 60_000);
    await retrievals.record(tenantId, "loop-stale", [lessonId], old);
    expect(await retrievals.lessonsRetrievedBy(tenantId, "loop-stale", old)).toEqual([lessonId]);
    expect(await retrievals.lessonsRetrievedBy(tenantId, "loop-stale", now)).toEqual([]);
    await retrievals.record(tenantId, "loop-y", [lessonId], now);
    const stale = await h.pool.query(
      "SELECT 1 FROM lesson_retrievals WHERE tenant_id = $1 AND loop_id = 'loop-stale'",
      [tenantId],
    );
    expect(stale.rowCount).toBe(0);

    // At most maxRetrievedPerLoop lessons per loop, however often it asks.
    const ids: string[] = [];
    for (let i = 0; i < maxRetrievedPerLoop + 5; i += 1) {
      const inserted = await h.pool.query<{ id: string }>(
        // A copy of the lesson under a signature of its own.
        `INSERT INTO reflections
         SELECT (jsonb_populate_record(NULL::reflections,
                   to_jsonb(r) || jsonb_build_object('id', gen_random_uuid(), 'signature', 'cap-' || $1::text))).*
           FROM reflections r WHERE r.id = $2 RETURNING id`,
        [String(i), lessonId],
      );
      ids.push(inserted.rows[0]?.id ?? "");
    }
    await retrievals.record(tenantId, "loop-many", ids.slice(0, 30), now);
    await retrievals.record(tenantId, "loop-many", ids.slice(30), now);
    expect(await retrievals.lessonsRetrievedBy(tenantId, "loop-many", now)).toHaveLength(maxRetrievedPerLoop);
  });
});
