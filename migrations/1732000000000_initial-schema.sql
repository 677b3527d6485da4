-- Up Migration

-- Accepted reflections, one row per (tenant, error signature): duplicates bump `occurrences`.
CREATE TABLE reflections (
  id              uuid PRIMARY KEY,
  tenant_id       text NOT NULL,
  project_id      text NOT NULL,
  signature       text NOT NULL,
  signature_type  text NOT NULL,
  reflection_text text NOT NULL,
  strategy_text   text,
  learning        text NOT NULL,
  importance      real NOT NULL CHECK (importance BETWEEN 0 AND 1),
  confidence      real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  quality_score   real NOT NULL CHECK (quality_score BETWEEN 0 AND 1),
  verdict         text NOT NULL CHECK (verdict IN ('accepted', 'accepted_with_warnings')),
  metrics         jsonb NOT NULL,
  violations      jsonb NOT NULL DEFAULT '[]',
  tags            text[] NOT NULL DEFAULT '{}',
  error_category  text,
  patterns        text[] NOT NULL DEFAULT '{}',
  adjustments     text[] NOT NULL DEFAULT '{}',
  generator       text NOT NULL,
  attempts        integer NOT NULL,
  embedding       real[] NOT NULL,
  occurrences     integer NOT NULL DEFAULT 1 CHECK (occurrences >= 1),
  source_event_id text NOT NULL,
  outcome         text NOT NULL,
  first_seen_at   timestamptz NOT NULL,
  last_seen_at    timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  search          tsvector GENERATED ALWAYS AS (
    to_tsvector('english', reflection_text || ' ' || coalesce(strategy_text, '') || ' ' || learning)
  ) STORED,
  UNIQUE (tenant_id, signature)
);
CREATE INDEX reflections_tenant_importance_idx ON reflections (tenant_id, importance DESC);
CREATE INDEX reflections_tenant_last_seen_idx ON reflections (tenant_id, last_seen_at DESC);
CREATE INDEX reflections_tags_idx ON reflections USING gin (tags);
CREATE INDEX reflections_search_idx ON reflections USING gin (search);

-- Dual storage: the strategy is its own record, importance boosted by 10%.
CREATE TABLE strategies (
  id            uuid PRIMARY KEY,
  reflection_id uuid NOT NULL UNIQUE REFERENCES reflections (id) ON DELETE CASCADE,
  tenant_id     text NOT NULL,
  project_id    text NOT NULL,
  strategy_text text NOT NULL,
  importance    real NOT NULL CHECK (importance BETWEEN 0 AND 1),
  tags          text[] NOT NULL DEFAULT '{}',
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX strategies_tenant_importance_idx ON strategies (tenant_id, importance DESC);
CREATE INDEX strategies_tags_idx ON strategies USING gin (tags);

-- One row per processed loop (the loop trace): the guardrail state and what was decided.
CREATE TABLE loop_traces (
  tenant_id          text NOT NULL,
  loop_id            text NOT NULL,
  root_loop_id       text NOT NULL,
  rerun_of           text,
  rerun_depth        integer NOT NULL DEFAULT 0,
  rerun_count        integer NOT NULL DEFAULT 0,
  max_reruns         integer NOT NULL,
  outcome            text NOT NULL,
  alignment          real,
  drift              real,
  reflection_fatigue real NOT NULL DEFAULT 0,
  fatigue_increased  boolean NOT NULL DEFAULT false,
  bias_echo          boolean NOT NULL DEFAULT false,
  repeated_tags      text[] NOT NULL DEFAULT '{}',
  decision           text NOT NULL CHECK (decision IN ('rerun', 'finalize', 'halt')),
  new_loop_id        text,
  rerun_reason       text NOT NULL,
  rerun_reason_detail text NOT NULL,
  rerun_trigger      text[] NOT NULL DEFAULT '{}',
  force_finalize     boolean NOT NULL DEFAULT false,
  overridden_by      text,
  orchestrator_persona text,
  reflection_persona text,
  task_text          text NOT NULL,
  source_event_id    text NOT NULL,
  decided_at         timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, loop_id)
);
CREATE INDEX loop_traces_root_idx ON loop_traces (tenant_id, root_loop_id);
CREATE INDEX loop_traces_task_search_idx ON loop_traces USING gin (to_tsvector('english', task_text));

-- Guardrail overrides set by operators before (or after) a loop completes.
CREATE TABLE loop_overrides (
  tenant_id          text NOT NULL,
  loop_id            text NOT NULL,
  override_fatigue   boolean NOT NULL DEFAULT false,
  override_max_reruns boolean NOT NULL DEFAULT false,
  overridden_by      text,
  override_reason    text,
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, loop_id)
);

-- Idempotency: every handled event id with the messages it produced, so a replay republishes
-- the same outputs instead of doing the work again.
CREATE TABLE processed_events (
  tenant_id     text NOT NULL,
  event_id      text NOT NULL,
  loop_id       text NOT NULL,
  signature     text,
  reflection_id uuid,
  outputs       jsonb NOT NULL,
  processed_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, event_id)
);

-- Bias tags raised per tenant (a history; a tag seen 3 times is an echo).
CREATE TABLE bias_tag_history (
  tenant_id     text NOT NULL,
  tag           text NOT NULL,
  occurrences   integer NOT NULL DEFAULT 0,
  last_loop_id  text NOT NULL,
  first_seen_at timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, tag)
);

-- Down Migration
DROP TABLE bias_tag_history;
DROP TABLE processed_events;
DROP TABLE loop_overrides;
DROP TABLE loop_traces;
DROP TABLE strategies;
DROP TABLE reflections;
