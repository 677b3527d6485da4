-- Up Migration

-- Lessons for a task are answered from an in-process index of each tenant's lessons and vectors,
-- kept fresh by reading only the rows that changed: `updated_at` moves on every change to a
-- lesson (a recurrence, feedback, a merge, a rewrite), set by a trigger so that no writer can
-- forget it. Rows before this migration take the time it ran.
ALTER TABLE reflections ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX reflections_tenant_updated_idx ON reflections (tenant_id, embedding_model, updated_at);

CREATE FUNCTION reflector_touch_reflection() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- clock_timestamp(), not now(): two changes in one transaction still move it forward.
  NEW.updated_at := clock_timestamp();
  RETURN NEW;
END;
$$;

CREATE TRIGGER reflections_touch_updated_at
  BEFORE UPDATE ON reflections
  FOR EACH ROW EXECUTE FUNCTION reflector_touch_reflection();

-- Whether a lesson helped when it was applied: a rerun that carried it (loop.decision.lessons)
-- succeeded ("helped"), or failed again and was filed under it ("failed again"). One row per
-- (event, lesson), so a replayed event counts nothing twice; the counts on the lesson move its
-- effective quality (src/domain/feedback/applied-outcome.ts).
ALTER TABLE reflections ADD COLUMN applied_helped integer NOT NULL DEFAULT 0;
ALTER TABLE reflections ADD COLUMN applied_failed integer NOT NULL DEFAULT 0;

CREATE TABLE lesson_outcomes (
  tenant_id     text NOT NULL,
  event_id      text NOT NULL,
  reflection_id uuid NOT NULL REFERENCES reflections (id) ON DELETE CASCADE,
  result        text NOT NULL CHECK (result IN ('helped', 'failed_again')),
  recorded_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, event_id, reflection_id)
);
CREATE INDEX lesson_outcomes_reflection_idx ON lesson_outcomes (reflection_id);

-- Outcomes are about the text that was applied: a replaced text starts again, as its votes do.
-- The trigger that resets the votes on a replaced text (1732000018500) resets these counts too.
CREATE OR REPLACE FUNCTION reflector_reset_replaced_feedback() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.effective_quality := NULL;
  NEW.feedback_rating := NULL;
  NEW.helpful_count := 0;
  NEW.harmful_count := 0;
  NEW.text_replaced_at := now();
  NEW.applied_helped := 0;
  NEW.applied_failed := 0;
  RETURN NEW;
END;
$$;

-- Down Migration

CREATE OR REPLACE FUNCTION reflector_reset_replaced_feedback() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.effective_quality := NULL;
  NEW.feedback_rating := NULL;
  NEW.helpful_count := 0;
  NEW.harmful_count := 0;
  NEW.text_replaced_at := now();
  RETURN NEW;
END;
$$;
DROP TABLE lesson_outcomes;
ALTER TABLE reflections DROP COLUMN applied_failed;
ALTER TABLE reflections DROP COLUMN applied_helped;

DROP TRIGGER reflections_touch_updated_at ON reflections;
DROP FUNCTION reflector_touch_reflection();
DROP INDEX reflections_tenant_updated_idx;
ALTER TABLE reflections DROP COLUMN updated_at;
