-- Up Migration

-- Group commit: the units of work of several events in one statement, so one transaction (one
-- WAL flush) carries them all. Each unit runs in its own subtransaction: a unit that fails (its
-- loop state moved under it, a deadlock with another instance, bad data) is rolled back alone and
-- reported with its SQLSTATE; the caller commits it again on its own.
CREATE FUNCTION reflector_commit_many(us jsonb)
RETURNS TABLE (i integer, committed boolean, occurrences integer, outputs jsonb, failed_state text)
LANGUAGE plpgsql AS $$
DECLARE
  u jsonb;
  n integer := 0;
  r record;
BEGIN
  FOR u IN SELECT value FROM jsonb_array_elements(us) LOOP
    i := n;
    BEGIN
      SELECT c.committed, c.occurrences, c.outputs INTO r FROM reflector_commit(u) AS c;
      committed := r.committed;
      occurrences := r.occurrences;
      outputs := r.outputs;
      failed_state := NULL;
    EXCEPTION WHEN OTHERS THEN
      committed := false;
      occurrences := NULL;
      outputs := NULL;
      failed_state := SQLSTATE;
    END;
    RETURN NEXT;
    n := n + 1;
  END LOOP;
END;
$$;

-- Down Migration
DROP FUNCTION reflector_commit_many(jsonb);
