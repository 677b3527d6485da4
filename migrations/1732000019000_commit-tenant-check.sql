-- Up Migration

-- The commit function checks the committing tenant before it touches a stored lesson: an
-- increment, a re-judgement or a merge (and the text that replaces a merged lesson) names a lesson
-- by id, and an id that is not this tenant's lesson updates nothing, so no tenant's event can count
-- towards, or rewrite, another tenant's lesson. The processor only sends ids it read for the
-- tenant; the database is the last line. The function of 1732000013000 stays as it is, renamed,
-- and this one checks the id, then hands the unit of work on: nothing of it is restated here.
ALTER FUNCTION reflector_commit(jsonb) RENAME TO reflector_commit_unchecked;

CREATE FUNCTION reflector_commit(u jsonb, OUT committed boolean, OUT occurrences integer, OUT outputs jsonb)
LANGUAGE plpgsql AS $$
BEGIN
  IF u->>'store' IN ('increment', 'merge') AND NOT EXISTS (
    SELECT 1 FROM reflections t WHERE t.id = (u->>'reflectionId')::uuid AND t.tenant_id = u->>'tenantId'
  ) THEN
    -- Recorded like a unit of work that stores nothing (the event is still processed once).
    u := u - 'store';
  END IF;
  SELECT c.committed, c.occurrences, c.outputs INTO committed, occurrences, outputs
    FROM reflector_commit_unchecked(u) AS c;
END;
$$;

-- Down Migration
DROP FUNCTION reflector_commit(jsonb);
ALTER FUNCTION reflector_commit_unchecked(jsonb) RENAME TO reflector_commit;
