-- Up Migration

-- The feedback override keeps the judged score (`quality_score`) as it was and records the
-- effective quality beside it; NULL = no feedback yet, the judged score is the effective one.
ALTER TABLE reflections ADD COLUMN effective_quality real CHECK (effective_quality BETWEEN 0 AND 1);
-- The latest rating decides the effective quality (src/domain/feedback/effective-quality.ts).
ALTER TABLE reflections ADD COLUMN feedback_rating text CHECK (feedback_rating IN ('up', 'down'));

-- Who gave the feedback (optional), and when they gave it: `created_at` is the user's time, which
-- orders the votes, so late delivery from Kafka cannot make an older vote win.
ALTER TABLE reflection_feedback ADD COLUMN user_id text;
CREATE INDEX reflection_feedback_latest_idx ON reflection_feedback (reflection_id, created_at DESC, feedback_id DESC);

-- Down Migration
DROP INDEX reflection_feedback_latest_idx;
ALTER TABLE reflection_feedback DROP COLUMN user_id;
ALTER TABLE reflections DROP COLUMN feedback_rating;
ALTER TABLE reflections DROP COLUMN effective_quality;
