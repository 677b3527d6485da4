-- Up Migration

-- A trace is its tenant's: two tenants sending the same trace id keep two traces, and no tenant's
-- spans join another's trace. Each trace also counts what it holds, so the bridge can refuse a
-- trace that grows past OTLP_MAX_SPANS_PER_TRACE or OTLP_MAX_TRACE_BYTES instead of holding it
-- until it exhausts the pod that closes it. Rows from before this migration have the tenant ''
-- (the bridge then reads the tenant from the trace's root, as it did).
ALTER TABLE otlp_spans DROP CONSTRAINT otlp_spans_trace_id_fkey;
ALTER TABLE otlp_spans DROP CONSTRAINT otlp_spans_pkey;
ALTER TABLE otlp_traces DROP CONSTRAINT otlp_traces_pkey;
ALTER TABLE otlp_traces ADD COLUMN tenant_id text NOT NULL DEFAULT '';
ALTER TABLE otlp_spans ADD COLUMN tenant_id text NOT NULL DEFAULT '';
ALTER TABLE otlp_traces ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE otlp_spans ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE otlp_traces ADD PRIMARY KEY (tenant_id, trace_id);
ALTER TABLE otlp_spans ADD PRIMARY KEY (tenant_id, trace_id, span_id);
ALTER TABLE otlp_spans ADD CONSTRAINT otlp_spans_trace_fkey
  FOREIGN KEY (tenant_id, trace_id) REFERENCES otlp_traces (tenant_id, trace_id) ON DELETE CASCADE;

ALTER TABLE otlp_traces ADD COLUMN span_count integer NOT NULL DEFAULT 0;
ALTER TABLE otlp_traces ADD COLUMN span_bytes bigint NOT NULL DEFAULT 0;
UPDATE otlp_traces t
SET span_count = s.spans, span_bytes = s.bytes
FROM (
  SELECT tenant_id, trace_id, count(*)::int AS spans, sum(octet_length(span::text))::bigint AS bytes
  FROM otlp_spans GROUP BY tenant_id, trace_id
) s
WHERE s.tenant_id = t.tenant_id AND s.trace_id = t.trace_id;

-- 'oversized': closed because it passed a cap; its spans are dropped, like an expired trace's.
ALTER TABLE otlp_traces DROP CONSTRAINT otlp_traces_state_check;
ALTER TABLE otlp_traces ADD CONSTRAINT otlp_traces_state_check
  CHECK (state IN ('open', 'published', 'expired', 'invalid', 'oversized'));

-- Down Migration
ALTER TABLE otlp_traces DROP CONSTRAINT otlp_traces_state_check;
DELETE FROM otlp_traces WHERE state = 'oversized';
ALTER TABLE otlp_traces ADD CONSTRAINT otlp_traces_state_check
  CHECK (state IN ('open', 'published', 'expired', 'invalid'));
ALTER TABLE otlp_traces DROP COLUMN span_bytes;
ALTER TABLE otlp_traces DROP COLUMN span_count;
ALTER TABLE otlp_spans DROP CONSTRAINT otlp_spans_trace_fkey;
ALTER TABLE otlp_spans DROP CONSTRAINT otlp_spans_pkey;
ALTER TABLE otlp_traces DROP CONSTRAINT otlp_traces_pkey;
-- The same trace id under two tenants cannot go back to one key: the later tenants' are dropped.
DELETE FROM otlp_traces t USING otlp_traces o
WHERE t.trace_id = o.trace_id AND t.tenant_id > o.tenant_id;
DELETE FROM otlp_spans s WHERE NOT EXISTS (
  SELECT 1 FROM otlp_traces t WHERE t.tenant_id = s.tenant_id AND t.trace_id = s.trace_id
);
ALTER TABLE otlp_spans DROP COLUMN tenant_id;
ALTER TABLE otlp_traces DROP COLUMN tenant_id;
ALTER TABLE otlp_traces ADD PRIMARY KEY (trace_id);
ALTER TABLE otlp_spans ADD PRIMARY KEY (trace_id, span_id);
ALTER TABLE otlp_spans ADD CONSTRAINT otlp_spans_trace_id_fkey
  FOREIGN KEY (trace_id) REFERENCES otlp_traces (trace_id) ON DELETE CASCADE;
