-- Up Migration

-- Dreaming stores pattern-level lessons next to the per-episode ones: same table, same
-- quality columns, told apart by `kind`. A pattern is one row per (tenant, group), its signature
-- derived from the group key, so a second dreaming run updates it instead of adding another.
ALTER TABLE reflections
  ADD COLUMN kind text NOT NULL DEFAULT 'episode' CHECK (kind IN ('episode', 'pattern'));
CREATE INDEX reflections_tenant_kind_importance_idx ON reflections (tenant_id, kind, importance DESC);

-- Which stored reflections a pattern was drawn from. Pruning a source drops its link; the next
-- dreaming run sees the changed set and rewrites the pattern.
CREATE TABLE reflection_sources (
  pattern_id uuid NOT NULL REFERENCES reflections (id) ON DELETE CASCADE,
  source_id  uuid NOT NULL REFERENCES reflections (id) ON DELETE CASCADE,
  tenant_id  text NOT NULL,
  PRIMARY KEY (pattern_id, source_id)
);
CREATE INDEX reflection_sources_source_idx ON reflection_sources (source_id);

-- Down Migration
DROP TABLE reflection_sources;
DROP INDEX reflections_tenant_kind_importance_idx;
ALTER TABLE reflections DROP COLUMN kind;
