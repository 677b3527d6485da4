-- Up Migration
-- Every judged reflection, stored or not (rejected ones too): the history adaptive prompting
-- reads its common issues from, and the quality record of what was scored and why.
CREATE TABLE reflection_judgements (
  tenant_id      text        NOT NULL,
  event_id       text        NOT NULL,
  signature      text        NOT NULL,
  verdict        text        NOT NULL CHECK (verdict IN ('accepted', 'accepted_with_warnings', 'rejected')),
  quality_score  real        NOT NULL CHECK (quality_score BETWEEN 0 AND 1),
  violations     jsonb       NOT NULL DEFAULT '[]',
  generator      text        NOT NULL,
  attempts       integer     NOT NULL,
  stored         boolean     NOT NULL,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX reflection_judgements_tenant_quality ON reflection_judgements (tenant_id, quality_score, created_at DESC);

-- Down Migration
DROP TABLE reflection_judgements;
