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

-- Down Migration

DROP TRIGGER reflections_touch_updated_at ON reflections;
DROP FUNCTION reflector_touch_reflection();
DROP INDEX reflections_tenant_updated_idx;
ALTER TABLE reflections DROP COLUMN updated_at;
