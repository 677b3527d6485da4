import type pg from "pg";
import type { OtlpSpan } from "../../domain/otlp/otlp-span.js";
import type { OtlpSpanStore, TraceClosing } from "../../pipeline/otlp-bridge-ports.js";
import { withStoreErrors } from "./store-errors.js";

/**
 * The spans of one batch in one statement: the traces are upserted in trace-id order (two bridges
 * adding to the same traces lock them in the same order, so they never deadlock), a root that
 * arrives restarts the trace's grace period, and spans of open traces are inserted once.
 */
const addSql = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::json[], $4::boolean[]) AS x(trace_id, span_id, span, root)
), traces AS (
  INSERT INTO otlp_traces (trace_id, first_seen_at, root_seen_at)
  SELECT trace_id, $5, CASE WHEN bool_or(root) THEN $5::timestamptz END
  FROM input GROUP BY trace_id ORDER BY trace_id
  ON CONFLICT (trace_id) DO UPDATE
    SET root_seen_at = CASE
      WHEN otlp_traces.state = 'open' AND excluded.root_seen_at IS NOT NULL
        THEN GREATEST(otlp_traces.root_seen_at, excluded.root_seen_at)
      ELSE otlp_traces.root_seen_at END
  RETURNING trace_id, state
), stored AS (
  INSERT INTO otlp_spans (trace_id, span_id, span)
  SELECT i.trace_id, i.span_id, i.span FROM input i JOIN traces t USING (trace_id) WHERE t.state = 'open'
  ON CONFLICT DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM stored)::int AS stored,
       (SELECT count(*) FROM input i JOIN traces t USING (trace_id) WHERE t.state <> 'open')::int AS late`;

const claimSql = `
SELECT trace_id FROM otlp_traces
WHERE state = 'open' AND root_seen_at <= $1::timestamptz - make_interval(secs => $2::double precision / 1000)
ORDER BY root_seen_at
LIMIT $3
FOR UPDATE SKIP LOCKED`;

const markSql = `
UPDATE otlp_traces t
SET state = CASE WHEN m.state = 'wait' THEN 'open' ELSE m.state END,
    closed_at = CASE WHEN m.state = 'wait' THEN NULL ELSE $3::timestamptz END,
    root_seen_at = CASE WHEN m.state = 'wait' THEN NULL ELSE t.root_seen_at END
FROM unnest($1::text[], $2::text[]) AS m(trace_id, state)
WHERE t.trace_id = m.trace_id`;

const expireSql = `
WITH doomed AS (
  SELECT trace_id FROM otlp_traces
  WHERE state = 'open' AND root_seen_at IS NULL
    AND first_seen_at <= $1::timestamptz - make_interval(secs => $2::double precision / 1000)
  ORDER BY first_seen_at
  LIMIT $3
  FOR UPDATE SKIP LOCKED
), counted AS (
  SELECT d.trace_id, (SELECT count(*) FROM otlp_spans s WHERE s.trace_id = d.trace_id)::int AS spans
  FROM doomed d
), gone AS (
  DELETE FROM otlp_spans s USING doomed d WHERE s.trace_id = d.trace_id
), marked AS (
  UPDATE otlp_traces t SET state = 'expired', closed_at = $1 FROM doomed d WHERE t.trace_id = d.trace_id
)
SELECT trace_id, spans FROM counted`;

const forgetSql = `
DELETE FROM otlp_traces
WHERE trace_id IN (
  SELECT trace_id FROM otlp_traces
  WHERE state <> 'open' AND closed_at < $1::timestamptz - make_interval(secs => $2::double precision / 1000)
  LIMIT 10000
)`;

/** The OTLP bridge's span store on Postgres (tables of migrations/1732000014000_otlp-spans.sql). */
export function createPgOtlpSpanStore(pool: pg.Pool): OtlpSpanStore {
  return {
    add(spans, now) {
      if (spans.length === 0) return Promise.resolve({ stored: 0, late: 0 });
      const traceIds = spans.map(({ span }) => span.traceId);
      const spanIds = spans.map(({ span }) => span.spanId);
      const bodies = spans.map(({ span }) => JSON.stringify(span));
      const roots = spans.map(({ rootCandidate }) => rootCandidate);
      return withStoreErrors(async () => {
        const result = await pool.query<{ stored: number; late: number }>(addSql, [
          traceIds,
          spanIds,
          bodies,
          roots,
          now,
        ]);
        const row = result.rows[0];
        return { stored: row?.stored ?? 0, late: row?.late ?? 0 };
      });
    },

    closeReady({ now, graceMs, limit }, close) {
      return withStoreErrors(async () => {
        const client = await pool.connect();
        let broken = false;
        try {
          await client.query("BEGIN");
          try {
            const claimed = await client.query<{ trace_id: string }>(claimSql, [now, graceMs, limit]);
            const ids = claimed.rows.map((row) => row.trace_id);
            if (ids.length === 0) {
              await client.query("COMMIT");
              return 0;
            }
            const spans = await client.query<{ trace_id: string; span: OtlpSpan }>(
              "SELECT trace_id, span FROM otlp_spans WHERE trace_id = ANY($1::text[])",
              [ids],
            );
            const byTrace = new Map<string, OtlpSpan[]>(ids.map((id) => [id, []]));
            for (const row of spans.rows) byTrace.get(row.trace_id)?.push(row.span);
            const outcome: Map<string, TraceClosing> = await close(
              [...byTrace].map(([traceId, traceSpans]) => ({ traceId, spans: traceSpans })),
            );
            const marked = ids.filter((id) => outcome.has(id));
            await client.query(markSql, [marked, marked.map((id) => outcome.get(id)), now]);
            const closed = marked.filter((id) => outcome.get(id) !== "wait");
            if (closed.length > 0) {
              await client.query("DELETE FROM otlp_spans WHERE trace_id = ANY($1::text[])", [closed]);
            }
            await client.query("COMMIT");
            return ids.length;
          } catch (err) {
            await client.query("ROLLBACK").catch(() => {
              broken = true;
            });
            throw err;
          }
        } finally {
          client.release(broken);
        }
      });
    },

    expire({ now, timeoutMs, forgetAfterMs, limit }) {
      return withStoreErrors(async () => {
        const expired = await pool.query<{ trace_id: string; spans: number }>(expireSql, [
          now,
          timeoutMs,
          limit,
        ]);
        await pool.query(forgetSql, [now, forgetAfterMs]);
        return expired.rows.map((row) => ({ traceId: row.trace_id, spanCount: row.spans }));
      });
    },
  };
}
