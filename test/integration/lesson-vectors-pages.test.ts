import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createPgLessonStore } from "../../src/adapters/postgres/pg-lesson-store.js";

/** The lessons-for-task index reads a tenant from Postgres a page at a time, in order of id. */
let pool: pg.Pool;
const tenantId = `pages-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });
  await pool.query(
    `INSERT INTO reflections (id, tenant_id, project_id, signature, signature_type, reflection_text, strategy_text,
       learning, importance, confidence, quality_score, verdict, metrics, tags, adjustments, generator, attempts,
       embedding, embedding_model, source_event_id, outcome, first_seen_at, last_seen_at)
     SELECT gen_random_uuid(), $1, 'p', 'sig-' || g, 'test', 't', 't', 't', 0.6, 0.8, 0.8, 'accepted', '{}'::jsonb,
       ARRAY['x'], ARRAY['a'], 'heuristic', 1, ARRAY[g, 1, 0]::real[], 'pages-model', 'evt-' || g, 'failure', now(), now()
       FROM generate_series(1, 7) AS g`,
    [tenantId],
  );
});

afterAll(async () => {
  await pool.query("DELETE FROM reflections WHERE tenant_id = $1", [tenantId]);
  await pool.end();
});

describe("the lesson store's pages of vectors", () => {
  it("gives at most `limit` rows in order of id after `afterId`, and every row once over the pages", async () => {
    const store = createPgLessonStore(pool);
    const all = await store.lessonVectors(tenantId, "pages-model", null);
    expect(all).toHaveLength(7);
    const pages: string[][] = [];
    let afterId: string | null = null;
    for (;;) {
      const rows = await store.lessonVectors(tenantId, "pages-model", null, { afterId, limit: 3 });
      pages.push(rows.map((r) => r.id));
      if (rows.length < 3) break;
      afterId = rows.at(-1)?.id ?? null;
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(all.map((r) => r.id).sort());
    expect(pages.flat()).toEqual([...pages.flat()].sort());
  });
});
