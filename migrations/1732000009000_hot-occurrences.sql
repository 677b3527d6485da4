-- Up Migration

-- Every event of a known signature bumps `occurrences` and `last_seen_at` of its reflection. With
-- `search` a stored generated column, each of those updates computed to_tsvector over the lesson
-- again, and the index on `last_seen_at` made every one a non-HOT update: a new entry in each of
-- the table's eight indexes (both GIN ones included) per event. Now `search` is computed only when
-- the text changes, nothing indexes `last_seen_at` (no query reads it in index order: it only
-- breaks ties and filters prune candidates already narrowed by importance), and pages keep room
-- for the new row version, so the counter update stays on its page and touches no index.
ALTER TABLE reflections ALTER COLUMN search DROP EXPRESSION;

CREATE FUNCTION reflections_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search := to_tsvector('english', NEW.reflection_text || ' ' || coalesce(NEW.strategy_text, '') || ' ' || NEW.learning);
  RETURN NEW;
END;
$$;

CREATE TRIGGER reflections_search BEFORE INSERT OR UPDATE OF reflection_text, strategy_text, learning, search
  ON reflections FOR EACH ROW EXECUTE FUNCTION reflections_search();

DROP INDEX reflections_tenant_last_seen_idx;

ALTER TABLE reflections SET (fillfactor = 70);

-- Down Migration
ALTER TABLE reflections RESET (fillfactor);
CREATE INDEX reflections_tenant_last_seen_idx ON reflections (tenant_id, last_seen_at DESC);
DROP TRIGGER reflections_search ON reflections;
DROP FUNCTION reflections_search();
ALTER TABLE reflections DROP COLUMN search;
ALTER TABLE reflections ADD COLUMN search tsvector GENERATED ALWAYS AS (
  to_tsvector('english', reflection_text || ' ' || coalesce(strategy_text, '') || ' ' || learning)
) STORED;
CREATE INDEX reflections_search_idx ON reflections USING gin (search);
