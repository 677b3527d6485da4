-- Up Migration

-- Pattern evidence ranks a tenant's episodes by full-text match (pg-reflection-store's
-- patternEvidence). With the tsvector only in an expression index, ts_rank parsed every matching
-- episode's text again for every query: 740 ms for one pattern over 5,000 episodes of one
-- tenant, paid by every judgement and every re-judged recurrence. Stored once per row, the same
-- query reads it: 4 ms.
ALTER TABLE loop_traces ADD COLUMN task_search tsvector GENERATED ALWAYS AS (to_tsvector('english', task_text)) STORED;
DROP INDEX loop_traces_task_search_idx;
CREATE INDEX loop_traces_task_search_idx ON loop_traces USING gin (task_search);

-- Down Migration

DROP INDEX loop_traces_task_search_idx;
ALTER TABLE loop_traces DROP COLUMN task_search;
CREATE INDEX loop_traces_task_search_idx ON loop_traces USING gin (to_tsvector('english', task_text));
