-- Up Migration

-- The record's metadata (docs/specification.md#the-records-metadata): what a stored lesson keeps of
-- the event it was written for (outcome, task description, event count, session; the reflection's
-- context, query and iteration; its relationships), written by reflector_commit at insert
-- (src/domain/memory/record-metadata.ts) and returned by the lessons API. Lessons stored before
-- keep '{}'.
ALTER TABLE reflections ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
SELECT reflector_keep_functions('1732000026200', ARRAY['reflector_commit', 'reflector_commit_many']);
\ir functions/reflector_commit.sql

-- Down Migration
SELECT reflector_restore_functions('1732000026200');
ALTER TABLE reflections DROP COLUMN metadata;
