-- Up Migration

-- The commit functions from their one source file, migrations/functions/reflector_commit.sql:
-- a change to them is a change to that file and a migration that applies it again, as this one
-- does. The tenant check of 1732000019000 moves into reflector_commit itself (the same check, made
-- after the event-id lock), so the wrapper and reflector_commit_unchecked go.
--
-- The function no longer patches the occurrence count into the outputs it stores: it stores them
-- as the processor built them and the count beside them (processed_events.occurrences), and the
-- adapter builds the outputs from the two with one function, for publishing and for a replay.
-- Rows stored before have no count (NULL) and their outputs already carry it.
--
-- A migration that replaces functions from a source file cannot restate the old definitions in
-- its down part without restating them in full again. So it keeps them instead: before replacing,
-- reflector_keep_functions() stores each one's definition as Postgres prints it, and its down part
-- runs reflector_restore_functions(), which puts them back exactly. A later migration that applies
-- the file again does the same with its own id: its up part is
--   SELECT reflector_keep_functions('<its id>', ARRAY['reflector_commit', 'reflector_commit_many']);
--   \ir functions/reflector_commit.sql
-- and its down part
--   SELECT reflector_restore_functions('<its id>');
CREATE TABLE reflector_replaced_functions (
  migration text NOT NULL,
  signature text NOT NULL,
  definition text NOT NULL,
  PRIMARY KEY (migration, signature)
);

CREATE FUNCTION reflector_keep_functions(migration text, names text[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO reflector_replaced_functions (migration, signature, definition)
  SELECT migration, p.oid::regprocedure::text, pg_get_functiondef(p.oid)
    FROM pg_proc p
   WHERE p.proname = ANY (names) AND p.pronamespace = current_schema()::regnamespace;
$$;

-- Drops whatever now has a kept function's signature, then creates the kept definition.
CREATE FUNCTION reflector_restore_functions(from_migration text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  f record;
BEGIN
  FOR f IN SELECT signature, definition FROM reflector_replaced_functions WHERE migration = from_migration LOOP
    EXECUTE format('DROP FUNCTION IF EXISTS %s', f.signature);
    EXECUTE f.definition;
  END LOOP;
  DELETE FROM reflector_replaced_functions WHERE migration = from_migration;
END;
$$;

ALTER TABLE processed_events ADD COLUMN occurrences integer;

SELECT reflector_keep_functions('1732000021000',
  ARRAY['reflector_commit', 'reflector_commit_unchecked', 'reflector_commit_many']);
DROP FUNCTION reflector_commit(jsonb);
DROP FUNCTION reflector_commit_unchecked(jsonb);
\ir functions/reflector_commit.sql

-- Down Migration
-- The tenant-check wrapper over reflector_commit_unchecked again, as 1732000019000 left them.
SELECT reflector_restore_functions('1732000021000');
-- The older functions replay stored outputs as they are: the count goes into them, by the rule
-- the adapter applies (the outcome is the first output that is not the loop decision).
WITH o AS (
  SELECT p.tenant_id, p.event_id,
         (SELECT min(e.n - 1)::integer FROM jsonb_array_elements(p.outputs) WITH ORDINALITY AS e(v, n)
           WHERE e.v->>'role' IS DISTINCT FROM 'loopDecision') AS idx
    FROM processed_events p
   WHERE p.occurrences IS NOT NULL
)
UPDATE processed_events p
   SET outputs = CASE WHEN p.outputs->o.idx->'value' ? 'deduplicated'
                 THEN jsonb_set(jsonb_set(p.outputs, ARRAY[o.idx::text, 'value', 'occurrences'], to_jsonb(p.occurrences)),
                                ARRAY[o.idx::text, 'value', 'deduplicated'],
                                to_jsonb((p.outputs->o.idx->'value'->>'deduplicated')::boolean OR p.occurrences > 1))
                 ELSE jsonb_set(p.outputs, ARRAY[o.idx::text, 'value', 'occurrences'], to_jsonb(p.occurrences)) END
  FROM o
 WHERE o.tenant_id = p.tenant_id AND o.event_id = p.event_id AND o.idx IS NOT NULL;
ALTER TABLE processed_events DROP COLUMN occurrences;
DROP FUNCTION reflector_restore_functions(text);
DROP FUNCTION reflector_keep_functions(text, text[]);
DROP TABLE reflector_replaced_functions;
