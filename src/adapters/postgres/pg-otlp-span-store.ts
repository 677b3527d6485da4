import type pg from "pg";
import type { OtlpSpan } from "../../domain/otlp/otlp-span.js";
import type {
  AddResult,
  ClosingTrace,
  OtlpSpanStore,
  TraceClosing,
} from "../../pipeline/otlp-bridge-ports.js";
import { inTransaction } from "./in-transaction.js";
import { withStoreErrors } from "./store-errors.js";

/**
 * The spans of one batch in one statement: the traces are upserted in key order (two bridges
 * adding to the same traces lock them in the same order, so they never deadlock), a root that
 * arrives restarts the trace's grace period, each open trace counts the spans and bytes it
 * receives, and the spans of open traces within their caps are inserted once. A trace the batch
 * takes past a cap is returned in `over` (its spans are not inserted). A batch read again after a
 * crash counts its spans again: the counts can only overstate what a trace holds.
 */
const addSql = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::json[], $5::boolean[])
    AS x(tenant_id, trace_id, span_id, span, root)
), incoming AS (
  SELECT tenant_id, trace_id, count(*)::int AS spans, sum(octet_length(span::text))::bigint AS bytes,
         bool_or(root) AS root
  FROM input GROUP BY tenant_id, trace_id
), traces AS (
  INSERT INTO otlp_traces (tenant_id, trace_id, first_seen_at, root_seen_at, span_count, span_bytes)
  SELECT tenant_id, trace_id, $6, CASE WHEN root THEN $6::timestamptz END, spans, bytes
  FROM incoming ORDER BY tenant_id, trace_id
  ON CONFLICT (tenant_id, trace_id) DO UPDATE
    SET root_seen_at = CASE
          WHEN otlp_traces.state = 'open' AND excluded.root_seen_at IS NOT NULL
            THEN GREATEST(otlp_traces.root_seen_at, excluded.root_seen_at)
          ELSE otlp_traces.root_seen_at END,
        span_count = CASE WHEN otlp_traces.state = 'open'
          THEN otlp_traces.span_count + excluded.span_count ELSE otlp_traces.span_count END,
        span_bytes = CASE WHEN otlp_traces.state = 'open'
          THEN otlp_traces.span_bytes + excluded.span_bytes ELSE otlp_traces.span_bytes END
  RETURNING tenant_id, trace_id, state, span_count, span_bytes
), judged AS (
  SELECT tenant_id, trace_id, span_count,
         state = 'open' AND span_count <= $7 AND span_bytes <= $8 AS kept,
         state = 'open' AND NOT (span_count <= $7 AND span_bytes <= $8) AS over
  FROM traces
), stored AS (
  INSERT INTO otlp_spans (tenant_id, trace_id, span_id, span)
  SELECT i.tenant_id, i.trace_id, i.span_id, i.span
  FROM input i JOIN judged j USING (tenant_id, trace_id) WHERE j.kept
  ON CONFLICT DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM stored)::int AS stored,
       (SELECT count(*) FROM input i JOIN judged j USING (tenant_id, trace_id) WHERE NOT j.kept)::int AS late,
       (SELECT coalesce(json_agg(json_build_object('tenantId', tenant_id, 'traceId', trace_id, 'spanCount', span_count)), '[]')
        FROM judged WHERE over) AS over`;

/** Traces past a cap: closed as oversized, their spans dropped. */
const oversizeSql = `
WITH doomed AS (
  SELECT * FROM unnest($1::text[], $2::text[]) AS d(tenant_id, trace_id)
), gone AS (
  DELETE FROM otlp_spans s USING doomed d WHERE s.tenant_id = d.tenant_id AND s.trace_id = d.trace_id
)
UPDATE otlp_traces t SET state = 'oversized', closed_at = $3
FROM doomed d WHERE t.tenant_id = d.tenant_id AND t.trace_id = d.trace_id
RETURNING t.tenant_id, t.trace_id, t.span_count`;

const claimSql = `
SELECT tenant_id, trace_id, span_count FROM otlp_traces
WHERE state = 'open' AND ($5::text IS NULL OR tenant_id = $5) AND (
  root_seen_at <= $1::timestamptz - make_interval(secs => $2::double precision / 1000)
  OR (root_seen_at IS NOT NULL
      AND first_seen_at <= $1::timestamptz - make_interval(secs => $4::double precision / 1000)))
ORDER BY root_seen_at
LIMIT $3
FOR UPDATE SKIP LOCKED`;

const markSql = `
UPDATE otlp_traces t
SET state = CASE WHEN m.state = 'wait' THEN 'open' ELSE m.state END,
    closed_at = CASE WHEN m.state = 'wait' THEN NULL ELSE $4::timestamptz END,
    root_seen_at = CASE WHEN m.state = 'wait' THEN NULL ELSE t.root_seen_at END
FROM unnest($1::text[], $2::text[], $3::text[]) AS m(tenant_id, trace_id, state)
WHERE t.tenant_id = m.tenant_id AND t.trace_id = m.trace_id`;

const expireSql = `
WITH doomed AS (
  SELECT tenant_id, trace_id, span_count FROM otlp_traces
  WHERE state = 'open' AND root_seen_at IS NULL AND ($4::text IS NULL OR tenant_id = $4)
    AND first_seen_at <= $1::timestamptz - make_interval(secs => $2::double precision / 1000)
  ORDER BY first_seen_at
  LIMIT $3
  FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM otlp_spans s USING doomed d WHERE s.tenant_id = d.tenant_id AND s.trace_id = d.trace_id
), marked AS (
  UPDATE otlp_traces t SET state = 'expired', closed_at = $1
  FROM doomed d WHERE t.tenant_id = d.tenant_id AND t.trace_id = d.trace_id
)
SELECT tenant_id, trace_id, span_count AS spans FROM doomed`;

const forgetSql = `
DELETE FROM otlp_traces
WHERE (tenant_id, trace_id) IN (
  SELECT tenant_id, trace_id FROM otlp_traces
  WHERE state <> 'open' AND closed_at < $1::timestamptz - make_interval(secs => $2::double precision / 1000)
  LIMIT 10000
)`;

const keyOf = (tenantId: string, traceId: string) => JSON.stringify([tenantId, traceId]);

/** Marks an error thrown by the caller's `close`, so it leaves the store as it is, not as a Postgres outage. */
class FromClose extends Error {
  constructor(readonly error: unknown) {
    super("the closer failed");
  }
}

/** Spans read per query when claimed traces are loaded: a few megabytes at most in memory. */
const spansPerLoad = 5_000;

/**
 * The claimed traces, their spans read when asked for: consecutive traces are read together up to
 * `spansPerLoad` spans (a larger trace alone), and a trace's spans are let go once handed out, so
 * a claim of many large traces never sits in memory at once, and small traces cost one query per
 * few thousand spans rather than one each.
 */
function lazyTraces(
  client: pg.PoolClient,
  rows: readonly { tenant_id: string; trace_id: string; span_count: number }[],
): ClosingTrace[] {
  const groupOf: number[] = [];
  let group = 0;
  let inGroup = 0;
  for (const row of rows) {
    if (inGroup > 0 && inGroup + row.span_count > spansPerLoad) {
      group += 1;
      inGroup = 0;
    }
    groupOf.push(group);
    inGroup += row.span_count;
  }
  let loaded = -1;
  let cache = new Map<string, OtlpSpan[]>();
  const load = async (g: number) => {
    const members = rows.filter((_row, i) => groupOf[i] === g);
    const result = await client.query<{ tenant_id: string; trace_id: string; span: OtlpSpan }>(
      `SELECT s.tenant_id, s.trace_id, s.span FROM otlp_spans s
       JOIN unnest($1::text[], $2::text[]) AS c(tenant_id, trace_id)
         ON s.tenant_id = c.tenant_id AND s.trace_id = c.trace_id`,
      [members.map((m) => m.tenant_id), members.map((m) => m.trace_id)],
    );
    cache = new Map(members.map((m) => [keyOf(m.tenant_id, m.trace_id), []]));
    for (const row of result.rows) cache.get(keyOf(row.tenant_id, row.trace_id))?.push(row.span);
    loaded = g;
  };
  return rows.map((row, i) => ({
    tenantId: row.tenant_id,
    traceId: row.trace_id,
    spans: () =>
      withStoreErrors(async () => {
        const g = groupOf[i] ?? 0;
        const key = keyOf(row.tenant_id, row.trace_id);
        if (loaded !== g || !cache.has(key)) await load(g);
        const spans = cache.get(key) ?? [];
        cache.delete(key);
        return spans;
      }),
  }));
}

/** The OTLP bridge's span store on Postgres (tables of migrations/1732000014000_otlp-spans.sql and 1732000016000_otlp-trace-keys.sql). */
export function createPgOtlpSpanStore(pool: pg.Pool): OtlpSpanStore {
  return {
    add(spans, now, caps) {
      if (spans.length === 0) return Promise.resolve({ stored: 0, late: 0, oversized: [] });
      return withStoreErrors(async (): Promise<AddResult> => {
        const result = await pool.query<{ stored: number; late: number; over: AddResult["oversized"] }>(
          addSql,
          [
            spans.map((s) => s.tenantId),
            spans.map((s) => s.span.traceId),
            spans.map((s) => s.span.spanId),
            spans.map((s) => JSON.stringify(s.span)),
            spans.map((s) => s.rootCandidate),
            now,
            caps.maxSpans,
            caps.maxBytes,
          ],
        );
        const row = result.rows[0];
        const oversized = row?.over ?? [];
        if (oversized.length > 0) {
          // Rare: close them and drop what they held; a crash before this leaves them open and
          // over their caps, so the next span of theirs closes them.
          await pool.query(oversizeSql, [
            oversized.map((t) => t.tenantId),
            oversized.map((t) => t.traceId),
            now,
          ]);
        }
        return { stored: row?.stored ?? 0, late: row?.late ?? 0, oversized };
      });
    },

    async closeReady({ now, graceMs, maxAgeMs, limit, tenantId }, close) {
      try {
        return await withStoreErrors(() =>
          inTransaction(pool, async (client) => {
            const claimed = await client.query<{ tenant_id: string; trace_id: string; span_count: number }>(
              claimSql,
              [now, graceMs, limit, maxAgeMs, tenantId ?? null],
            );
            if (claimed.rows.length === 0) return 0;
            const traces = lazyTraces(client, claimed.rows);
            let outcome: ReadonlyMap<ClosingTrace, TraceClosing>;
            try {
              outcome = await close(traces);
            } catch (err) {
              throw new FromClose(err);
            }
            const marked = traces.filter((t) => outcome.has(t));
            await client.query(markSql, [
              marked.map((t) => t.tenantId),
              marked.map((t) => t.traceId),
              marked.map((t) => outcome.get(t)),
              now,
            ]);
            const closed = marked.filter((t) => outcome.get(t) !== "wait");
            if (closed.length > 0) {
              await client.query(
                `DELETE FROM otlp_spans s USING unnest($1::text[], $2::text[]) AS c(tenant_id, trace_id)
                 WHERE s.tenant_id = c.tenant_id AND s.trace_id = c.trace_id`,
                [closed.map((t) => t.tenantId), closed.map((t) => t.traceId)],
              );
            }
            return claimed.rows.length;
          }),
        );
      } catch (err) {
        // withStoreErrors wraps what it does not know as STORE_UNAVAILABLE; the cause is kept.
        const cause: unknown = err instanceof FromClose ? err : (err as { cause?: unknown }).cause;
        if (cause instanceof FromClose) throw cause.error;
        throw err;
      }
    },

    expire({ now, timeoutMs, forgetAfterMs, limit, tenantId }) {
      return withStoreErrors(async () => {
        const expired = await pool.query<{ tenant_id: string; trace_id: string; spans: number }>(expireSql, [
          now,
          timeoutMs,
          limit,
          tenantId ?? null,
        ]);
        await pool.query(forgetSql, [now, forgetAfterMs]);
        return expired.rows.map((row) => ({
          tenantId: row.tenant_id,
          traceId: row.trace_id,
          spanCount: row.spans,
        }));
      });
    },
  };
}
