-- Up Migration

-- A cheaper group commit, with the same writes and results (docs/benchmarks.md, "e2e: where a
-- drain's CPU goes"). Replaying the 5,000 units of an e2e drain one group per transaction put a
-- unit at about 0.25 ms of Postgres CPU; of that, compressing the stored outputs (about 5 KB of
-- JSON a unit) took 0.02–0.03 ms with pglz, and every increment read its lesson once to check the
-- tenant and again to update it.
--
-- 1. The outputs that processed_events keeps for a replay are compressed with lz4 instead of
--    pglz: several times cheaper to compress, slightly larger. Rows stored before stay as they
--    are (Postgres reads either). A server built without lz4 keeps pglz.
-- 2. reflector_commit checks an increment's or a merge's lesson against the tenant in the UPDATE
--    that counts it, instead of in a read before (migrations/functions/reflector_commit.sql).
SELECT reflector_keep_functions('1732000024000', ARRAY['reflector_commit', 'reflector_commit_many']);
\ir functions/reflector_commit.sql
DO $$
BEGIN
  ALTER TABLE processed_events ALTER COLUMN outputs SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not supported by this server: processed_events.outputs stays pglz';
END;
$$;

-- Down Migration
ALTER TABLE processed_events ALTER COLUMN outputs SET COMPRESSION pglz;
SELECT reflector_restore_functions('1732000024000');
