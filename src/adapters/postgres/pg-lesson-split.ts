import { randomUUID } from "node:crypto";
import type pg from "pg";
import type {
  SplitAuditQuery,
  SplitRecord,
  SplitRequest,
  SplitResult,
  SplitTarget,
} from "../../domain/memory/lesson-split.js";
import { inTransaction } from "./in-transaction.js";
import { withStoreErrors as guarded } from "./store-errors.js";

interface Source {
  event_id: string;
  signature: string | null;
  processed_at: Date;
}

/**
 * A copy of the lesson that stands for the moving sources alone: its text and judgement, a
 * signature of its own, their count and times, the merged signatures that move with them.
 */
async function copyLesson(
  client: pg.PoolClient,
  cols: string[],
  request: SplitRequest,
  moving: Source[],
  signaturesMoved: string[],
  now: Date,
): Promise<string> {
  const id = randomUUID();
  const first = moving[0];
  const last = moving[moving.length - 1];
  const overrides = {
    id,
    signature: `split:${id}`,
    occurrences: moving.length,
    source_event_id: first?.event_id,
    first_seen_at: first?.processed_at.toISOString(),
    last_seen_at: last?.processed_at.toISOString(),
    merged_signatures: signaturesMoved,
    created_at: now.toISOString(),
  };
  const list = cols.map((c) => `"${c}"`).join(", ");
  await client.query(
    `INSERT INTO reflections (${list})
     SELECT ${list} FROM jsonb_populate_record(NULL::reflections,
       (SELECT to_jsonb(r) FROM reflections r WHERE r.id = $1) || $2::jsonb)`,
    [request.lessonId, JSON.stringify(overrides)],
  );
  // The copy's strategy record, as every stored lesson has one (the commit function writes it).
  await client.query(
    `INSERT INTO strategies (id, reflection_id, tenant_id, project_id, strategy_text, importance, tags, created_at)
     SELECT $3, $2, tenant_id, project_id, strategy_text, importance, tags, $4
       FROM strategies WHERE reflection_id = $1`,
    [request.lessonId, id, randomUUID(), now.toISOString()],
  );
  await client.query(
    `UPDATE reflection_aliases SET reflection_id = $3
      WHERE tenant_id = $1 AND reflection_id = $2 AND signature = ANY($4::text[])`,
    [request.tenantId, request.lessonId, id, signaturesMoved],
  );
  return id;
}

/**
 * Splitting a merge in Postgres (see `src/domain/memory/lesson-split.ts`): the named processed
 * events move from the lesson to a copy of it or to no lesson, the merged signatures whose every
 * failure moves go with them and the occurrence counts follow, all in one transaction under the
 * lesson's row lock, so a concurrent merge or reuse of the lesson waits for it. The same
 * transaction writes the split's audit row (`lesson_splits`): a split is never made unrecorded.
 */
export function createPgLessonSplitStore(pool: pg.Pool, options: { clock?: { now(): Date } } = {}) {
  const clock = options.clock ?? { now: () => new Date() };
  /** The columns a copy of a lesson takes (generated ones are computed by Postgres). */
  let copyable: Promise<string[]> | undefined;
  const columns = () =>
    (copyable ??= pool
      .query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'reflections' AND is_generated = 'NEVER'
          ORDER BY ordinal_position`,
      )
      .then((res) => res.rows.map((r) => r.column_name)));

  return {
    splitSources: (request: SplitRequest) =>
      guarded(async (): Promise<SplitResult> => {
        // Read before the transaction's connection is taken: a pool of one must not wait on itself.
        const cols = await columns();
        // A refusal returns before anything is written: its transaction commits nothing.
        return inTransaction(pool, async (client) => {
          const lesson = await client.query<{ signature: string }>(
            "SELECT signature FROM reflections WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
            [request.tenantId, request.lessonId],
          );
          const own = lesson.rows[0]?.signature;
          if (own === undefined) {
            return { status: "not_found" };
          }
          const sources = await client.query<{
            event_id: string;
            signature: string | null;
            processed_at: Date;
          }>(
            `SELECT event_id, signature, processed_at FROM processed_events
              WHERE tenant_id = $1 AND reflection_id = $2 ORDER BY processed_at, event_id FOR UPDATE`,
            [request.tenantId, request.lessonId],
          );
          const named = new Set(request.eventIds);
          const moving = sources.rows.filter((s) => named.has(s.event_id));
          const missing = request.eventIds.filter((id) => !moving.some((s) => s.event_id === id));
          if (missing.length) {
            return { status: "not_sources", missing };
          }
          if (moving.length === sources.rows.length) {
            return { status: "all_sources", sources: sources.rows.length };
          }
          // A merged signature moves when every failure filed under it moves; the lesson's own stays.
          const staying = new Set(sources.rows.filter((s) => !named.has(s.event_id)).map((s) => s.signature));
          const signaturesMoved = [
            ...new Set(moving.map((s) => s.signature).filter((s): s is string => s !== null)),
          ].filter((s) => s !== own && !staying.has(s));
          const ids = moving.map((s) => s.event_id);
          // One time for the split: the copy's creation and the audit row's.
          const now = clock.now();
          let newLessonId: string | null = null;
          if (request.to === "new_lesson") {
            newLessonId = await copyLesson(client, cols, request, moving, signaturesMoved, now);
          } else {
            await client.query(
              `DELETE FROM reflection_aliases
                WHERE tenant_id = $1 AND reflection_id = $2 AND signature = ANY($3::text[])`,
              [request.tenantId, request.lessonId, signaturesMoved],
            );
          }
          await client.query(
            `UPDATE processed_events SET reflection_id = $3
              WHERE tenant_id = $1 AND reflection_id = $2 AND event_id = ANY($4::text[])`,
            [request.tenantId, request.lessonId, newLessonId, ids],
          );
          await client.query(
            `UPDATE reflections
                SET occurrences = GREATEST(1, occurrences - $2),
                    merged_signatures = ARRAY(SELECT s FROM unnest(merged_signatures) s WHERE NOT s = ANY($3::text[]))
              WHERE id = $1`,
            [request.lessonId, moving.length, signaturesMoved],
          );
          await client.query(
            `INSERT INTO lesson_splits (id, tenant_id, reflection_id, new_reflection_id, target,
                                        moved_event_ids, moved_signatures, remaining_sources, actor, split_at)
             VALUES ($1, $2, $3, $4, $5, $6::text[], $7::text[], $8, $9, $10)`,
            [
              randomUUID(),
              request.tenantId,
              request.lessonId,
              newLessonId,
              request.to,
              ids,
              signaturesMoved,
              sources.rows.length - moving.length,
              request.actor ?? "unknown",
              now.toISOString(),
            ],
          );
          return {
            status: "split",
            lessonId: request.lessonId,
            newLessonId,
            moved: ids,
            remaining: sources.rows.length - moving.length,
            signaturesMoved,
          };
        });
      }),

    listSplits: (tenantId: string, query: SplitAuditQuery) =>
      guarded(async (): Promise<SplitRecord[]> => {
        const res = await pool.query<{
          id: string;
          reflection_id: string;
          new_reflection_id: string | null;
          target: SplitTarget;
          moved_event_ids: string[];
          moved_signatures: string[];
          remaining_sources: number;
          actor: string;
          split_at: Date;
        }>(
          `SELECT id, reflection_id, new_reflection_id, target, moved_event_ids, moved_signatures,
                  remaining_sources, actor, split_at
             FROM lesson_splits
            WHERE tenant_id = $1 AND ($2::uuid IS NULL OR reflection_id = $2 OR new_reflection_id = $2)
            ORDER BY split_at DESC, id
            LIMIT $3`,
          [tenantId, query.lessonId ?? null, query.limit],
        );
        return res.rows.map((r) => ({
          id: r.id,
          lessonId: r.reflection_id,
          newLessonId: r.new_reflection_id,
          to: r.target,
          moved: r.moved_event_ids,
          signaturesMoved: r.moved_signatures,
          remaining: r.remaining_sources,
          actor: r.actor,
          at: r.split_at,
        }));
      }),
  };
}
