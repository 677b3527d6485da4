-- Up Migration

-- Lessons served to a task through `POST /api/v1/lessons/for-task` with the `loopId` the agent
-- will publish that task's completion under. When that completion is processed, its success
-- counts "helped" for each lesson retrieved for the loop, and a failure filed under one of them
-- counts "failed again" for it (src/domain/feedback/applied-outcome.ts), once per event through
-- `lesson_outcomes` as for the lessons a rerun carries.
--
-- Bounded: one row per (tenant, loop, lesson), at most 50 lessons per loop (the route's largest
-- `limit`), and rows older than the retention (7 days, src/adapters/postgres/pg-lesson-retrievals.ts)
-- are neither read nor kept: each recording deletes some of its tenant's expired rows.
CREATE TABLE lesson_retrievals (
  tenant_id     text NOT NULL,
  loop_id       text NOT NULL,
  reflection_id uuid NOT NULL REFERENCES reflections (id) ON DELETE CASCADE,
  retrieved_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, loop_id, reflection_id)
);
CREATE INDEX lesson_retrievals_expiry_idx ON lesson_retrievals (tenant_id, retrieved_at);
CREATE INDEX lesson_retrievals_reflection_idx ON lesson_retrievals (reflection_id);

-- Down Migration

DROP TABLE lesson_retrievals;
