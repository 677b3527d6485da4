import type pg from "pg";
import type { OtlpSpan } from "../../domain/otlp/otlp-span.js";
import type {
  AddResult,
  ClosingTrace,
  OtlpSpanStore,
  TraceClosing,
  TraceRef,
} from "../../pipeline/otlp-bridge-ports.js";
import { withStoreErrors } from "./store-errors.js";

/**
 * The traces of one batch, upserted in key order (two bridges adding to the same traces lock them
 * in the same order, so they never deadlock); a root that arrives restarts the trace's grace
 * period. Returns each trace's state and what it holds, for the caps.
 */
const upsertTracesSql = `
INSERT INTO otlp_traces (tenant_id, trace_id, first_seen_at, root_seen_at)
SELECT tenant_id, trace_id, $3, CASE WHEN bool_or(root) THEN $3::timestamptz END
FROM unnest($1::text[], $2::text[], $4::boolean[]) AS x(tenant_id, trace_id, root)
GROUP BY tenant_id, trace_id ORDER BY tenant_id, trace_id
ON CONFLICT (tenant_id, trace_id) DO UPDATE
  SET root_seen_at = CASE
    WHEN otlp_traces.state = 'open' AND excluded.root_seen_at IS NOT NULL
      THEN GREATEST(otlp_traces.root_seen_at, excluded.root_seen_at)
    ELSE otlp_traces.root_seen_at END
RETURNING tenant_id, trace_id, state, span_count, span_bytes`;

/** The spans of open traces within their caps, each once; what was inserted is counted on its trace. */
const insertSpansSql = `
WITH stored AS (
  INSERT INTO otlp_spans (tenant_id, trace_id, span_id, span)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::json[])
  ON CONFLICT DO NOTHING
  RETURNING tenant_id, trace_id, octet_length(span::text) AS bytes
), counted AS (
  UPDATE otlp_traces t SET span_count = t.span_count + c.spans, span_bytes = t.span_bytes + c.bytes
  FROM (SELECT tenant_id, trace_id, count(*)::int AS spans, sum(bytes)::bigint AS bytes
        FROM stored GROUP BY tenant_id, trace_id) c
  WHERE t.tenant_id = c.tenant_id AND t.trace_id = c.trace_id
)
SELECT count(*)::int AS stored FROM stored`;

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
SELECT tenant_id, trace_id FROM otlp_traces
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

/** Runs `work` in one transaction on its own client; rolls back when it throws. */
async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN");
    try {
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}

/** The OTLP bridge's span store on Postgres (tables of migrations/1732000014000_otlp-spans.sql and 1732000016000_otlp-trace-keys.sql). */
export function createPgOtlpSpanStore(pool: pg.Pool): OtlpSpanStore {
  return {
    add(spans, now, caps) {
      if (spans.length === 0) return Promise.resolve({ stored: 0, late: 0, oversized: [] });
      return withStoreErrors(() =>
        inTransaction(pool, async (client): Promise<AddResult> => {
          const traces = await client.query<{
            tenant_id: string;
            trace_id: string;
            state: string;
            span_count: number;
            span_bytes: string;
          }>(upsertTracesSql, [
            spans.map((s) => s.tenantId),
            spans.map((s) => s.span.traceId),
            now,
            spans.map((s) => s.rootCandidate),
          ]);
          const held = new Map(traces.rows.map((row) => [keyOf(row.tenant_id, row.trace_id), row]));
          const bodies = spans.map(({ span }) => JSON.stringify(span));
          const incoming = new Map<string, { spans: number; bytes: number }>();
          spans.forEach((s, i) => {
            const key = keyOf(s.tenantId, s.span.traceId);
            const sum = incoming.get(key) ?? { spans: 0, bytes: 0 };
            sum.spans += 1;
            sum.bytes += Buffer.byteLength(bodies[i] ?? "");
            incoming.set(key, sum);
          });
          const over: TraceRef[] = [];
          for (const [key, sum] of incoming) {
            const row = held.get(key);
            if (row?.state !== "open") continue;
            if (
              row.span_count + sum.spans > caps.maxSpans ||
              Number(row.span_bytes) + sum.bytes > caps.maxBytes
            ) {
              over.push({ tenantId: row.tenant_id, traceId: row.trace_id });
            }
          }
          const overKeys = new Set(over.map((t) => keyOf(t.tenantId, t.traceId)));
          const keep = spans
            .map((s, i) => ({ s, body: bodies[i] ?? "", key: keyOf(s.tenantId, s.span.traceId) }))
            .filter(({ key }) => held.get(key)?.state === "open" && !overKeys.has(key));
          const late = spans.length - keep.length;
          let stored = 0;
          if (keep.length > 0) {
            const inserted = await client.query<{ stored: number }>(insertSpansSql, [
              keep.map(({ s }) => s.tenantId),
              keep.map(({ s }) => s.span.traceId),
              keep.map(({ s }) => s.span.spanId),
              keep.map(({ body }) => body),
            ]);
            stored = inserted.rows[0]?.stored ?? 0;
          }
          let oversized: AddResult["oversized"] = [];
          if (over.length > 0) {
            const closed = await client.query<{ tenant_id: string; trace_id: string; span_count: number }>(
              oversizeSql,
              [over.map((t) => t.tenantId), over.map((t) => t.traceId), now],
            );
            oversized = closed.rows.map((row) => ({
              tenantId: row.tenant_id,
              traceId: row.trace_id,
              spanCount: row.span_count + (incoming.get(keyOf(row.tenant_id, row.trace_id))?.spans ?? 0),
            }));
          }
          return { stored, late, oversized };
        }),
      );
    },

    async closeReady({ now, graceMs, maxAgeMs, limit, tenantId }, close) {
      try {
        return await withStoreErrors(() =>
          inTransaction(pool, async (client) => {
            const claimed = await client.query<{ tenant_id: string; trace_id: string }>(claimSql, [
              now,
              graceMs,
              limit,
              maxAgeMs,
              tenantId ?? null,
            ]);
            if (claimed.rows.length === 0) return 0;
            // One trace's spans at a time: a claim of many large traces never sits in memory at once.
            const traces: ClosingTrace[] = claimed.rows.map((row) => ({
              tenantId: row.tenant_id,
              traceId: row.trace_id,
              spans: () =>
                withStoreErrors(async () => {
                  const result = await client.query<{ span: OtlpSpan }>(
                    "SELECT span FROM otlp_spans WHERE tenant_id = $1 AND trace_id = $2",
                    [row.tenant_id, row.trace_id],
                  );
                  return result.rows.map((r) => r.span);
                }),
            }));
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
