-- Up Migration

-- A user's 👍/👎 on an agent's answer (the answer of one loop), recorded once per feedback id. It
-- moves the answer's self-evaluation as a vote moves a lesson: the evaluated quality stays as it
-- was and the effective one is kept beside it, so adaptive prompting reads what users think too.
CREATE TABLE answer_feedback (
  tenant_id   text        NOT NULL,
  feedback_id text        NOT NULL,
  loop_id     text        NOT NULL,
  rating      text        NOT NULL CHECK (rating IN ('up', 'down')),
  comment     text,
  user_id     text,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, feedback_id)
);
CREATE INDEX answer_feedback_loop_idx ON answer_feedback (tenant_id, loop_id, created_at DESC);

ALTER TABLE answer_evaluations
  ADD COLUMN effective_quality real CHECK (effective_quality BETWEEN 0 AND 1),
  ADD COLUMN feedback_rating text CHECK (feedback_rating IN ('up', 'down')),
  ADD COLUMN feedback_comment text,
  ADD COLUMN feedback_at timestamptz;
CREATE INDEX answer_evaluations_loop_idx ON answer_evaluations (tenant_id, loop_id);

-- Down Migration
DROP INDEX answer_evaluations_loop_idx;
ALTER TABLE answer_evaluations DROP COLUMN feedback_at, DROP COLUMN feedback_comment,
  DROP COLUMN feedback_rating, DROP COLUMN effective_quality;
DROP TABLE answer_feedback;
