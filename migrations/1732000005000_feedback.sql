-- Up Migration

-- User feedback on stored reflections, from the HTTP API or the reflection.feedback topic.
CREATE TABLE reflection_feedback (
  tenant_id     text NOT NULL,
  feedback_id   text NOT NULL,
  reflection_id uuid NOT NULL REFERENCES reflections (id) ON DELETE CASCADE,
  rating        text NOT NULL CHECK (rating IN ('up', 'down')),
  comment       text,
  source        text NOT NULL CHECK (source IN ('http', 'kafka')),
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, feedback_id)
);
CREATE INDEX reflection_feedback_reflection_idx ON reflection_feedback (reflection_id);

-- Per-lesson counters, kept in the same transaction as the feedback row.
ALTER TABLE reflections
  ADD COLUMN helpful_count integer NOT NULL DEFAULT 0,
  ADD COLUMN harmful_count integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE reflections DROP COLUMN harmful_count, DROP COLUMN helpful_count;
DROP TABLE reflection_feedback;
