-- Up Migration

-- Where a failure went wrong and which agent did it (the reflection's `attribution`: step, actor,
-- tool, confidence, evidence), kept with the lesson so the API and a reused lesson show it. Null
-- for successes and for lessons stored before attribution existed. reflector_commit writes it
-- from 1732000011000 on.
ALTER TABLE reflections ADD COLUMN attribution jsonb;

-- Down Migration
ALTER TABLE reflections DROP COLUMN attribution;
