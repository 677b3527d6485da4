-- Up Migration
-- The self-evaluation of each answered task, kept for adaptive prompting and insights.
CREATE TABLE answer_evaluations (
  tenant_id     text        NOT NULL,
  event_id      text        NOT NULL,
  loop_id       text        NOT NULL,
  question      text        NOT NULL,
  answer_hash   text        NOT NULL,
  evaluator     text        NOT NULL,
  quality       real        NOT NULL CHECK (quality BETWEEN 0 AND 1),
  confidence    real        NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  relevance     real        NOT NULL CHECK (relevance BETWEEN 0 AND 1),
  completeness  real        NOT NULL CHECK (completeness BETWEEN 0 AND 1),
  issues        jsonb       NOT NULL DEFAULT '[]',
  improvements  jsonb       NOT NULL DEFAULT '[]',
  should_retry  boolean     NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX answer_evaluations_tenant_quality ON answer_evaluations (tenant_id, quality, created_at DESC);

-- Down Migration
DROP TABLE answer_evaluations;
