-- Up Migration

-- The OTLP bridge (docs/otlp-ingest.md) keeps the spans of each trace here until the trace is
-- complete, then publishes one agent.task.completed event built from them. A trace row outlives
-- its spans as a tombstone (state published, expired or invalid), so spans that arrive after the
-- trace was closed are recognised as late instead of opening the trace again.
CREATE TABLE otlp_traces (
  trace_id        text PRIMARY KEY,
  state           text NOT NULL DEFAULT 'open'
                  CHECK (state IN ('open', 'published', 'expired', 'invalid')),
  first_seen_at   timestamptz NOT NULL,
  -- When the latest span that may be the trace's root arrived (bridge clock); null = no root yet.
  root_seen_at    timestamptz,
  closed_at       timestamptz
);
-- The sweep's two questions: which open traces have a root older than the grace period, and which
-- open traces are older than the timeout.
CREATE INDEX otlp_traces_ready ON otlp_traces (root_seen_at) WHERE state = 'open';
CREATE INDEX otlp_traces_age ON otlp_traces (first_seen_at) WHERE state = 'open';
CREATE INDEX otlp_traces_closed ON otlp_traces (closed_at) WHERE state <> 'open';

CREATE TABLE otlp_spans (
  trace_id  text NOT NULL REFERENCES otlp_traces (trace_id) ON DELETE CASCADE,
  span_id   text NOT NULL,
  -- json, not jsonb: the span is written once and read back whole, never queried inside, and json
  -- is stored as the text it is (no conversion on insert or on read).
  span      json NOT NULL,
  -- The same span read twice (a batch re-read after a crash before its offsets were committed)
  -- is stored once.
  PRIMARY KEY (trace_id, span_id)
);

-- Down Migration
DROP TABLE otlp_spans;
DROP TABLE otlp_traces;
