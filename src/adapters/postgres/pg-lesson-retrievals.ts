import type pg from "pg";
import { withStoreErrors as guarded } from "./store-errors.js";

/** How long a retrieval waits for its task's completion; older ones are neither read nor kept. */
export const lessonRetrievalRetentionMs = 7 * 86_400_000;
/** Lessons remembered for one loop at most (the largest `limit` of the lessons-for-task route). */
export const maxRetrievedPerLoop = 50;
/** Expired rows one recording deletes at most, so that a backlog is cleared in bounded steps. */
const expiredPerRecording = 500;

/**
 * Which lessons `POST /api/v1/lessons/for-task` served to a loop, kept until the loop's own
 * completion is processed and counts for or against them (`src/pipeline/lesson-outcomes.ts`).
 * Tenant-scoped on both sides: a lesson of another tenant is never recorded, and a loop id is
 * only looked up within its tenant.
 */
export function createPgLessonRetrievals(pool: pg.Pool) {
  return {
    /**
     * Remembers that `reflectionIds` were served for `loopId`; a lesson served again keeps its
     * first time. Lessons of other tenants are skipped, and a loop keeps at most
     * `maxRetrievedPerLoop`. Some of the tenant's expired rows go in the same statement.
     */
    record: (tenantId: string, loopId: string, reflectionIds: readonly string[], at: Date) =>
      guarded(async () => {
        if (reflectionIds.length === 0) return;
        const expiredBefore = new Date(at.getTime() - lessonRetrievalRetentionMs);
        await pool.query(
          `WITH expired AS (
             DELETE FROM lesson_retrievals
              WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM lesson_retrievals
                 WHERE tenant_id = $1 AND retrieved_at < $5 LIMIT $7))
           ), held AS (
             SELECT count(*)::int AS n FROM lesson_retrievals WHERE tenant_id = $1 AND loop_id = $2
           )
           INSERT INTO lesson_retrievals (tenant_id, loop_id, reflection_id, retrieved_at)
           SELECT $1, $2, r.id, $4
             FROM unnest($3::uuid[]) WITH ORDINALITY AS x(id, n)
             JOIN reflections r ON r.id = x.id AND r.tenant_id = $1
            WHERE x.n <= $6 - (SELECT n FROM held)
           ON CONFLICT DO NOTHING`,
          [tenantId, loopId, reflectionIds, at, expiredBefore, maxRetrievedPerLoop, expiredPerRecording],
        );
      }),

    /** The lessons served for `loopId` within the retention before `at`, in the order they were served. */
    lessonsRetrievedBy: (tenantId: string, loopId: string, at: Date) =>
      guarded(async () => {
        const res = await pool.query<{ id: string }>(
          `SELECT reflection_id AS id FROM lesson_retrievals
            WHERE tenant_id = $1 AND loop_id = $2 AND retrieved_at >= $3
            ORDER BY retrieved_at, reflection_id`,
          [tenantId, loopId, new Date(at.getTime() - lessonRetrievalRetentionMs)],
        );
        return res.rows.map((r) => r.id);
      }),
  };
}

export type PgLessonRetrievals = ReturnType<typeof createPgLessonRetrievals>;
