-- Up Migration

-- Feedback is about the text it was given on. When a merge (or a rewrite) replaces a lesson's
-- text, the new text has earned no vote: the up-votes, down-votes, latest rating and effective
-- quality of the old text must not make it trusted. The old votes stay in `reflection_feedback`
-- as history; the lesson's own counts start again, and its judged score is its quality until new
-- feedback comes: `text_replaced_at` marks when, and a vote given before it (a late delivery)
-- neither decides nor counts (pg-feedback-store.ts). A trigger, so every path that replaces the
-- text (the commit function's merge, dreaming's rewrite) does it in the same statement.
ALTER TABLE reflections ADD COLUMN text_replaced_at timestamptz;

CREATE FUNCTION reflector_reset_replaced_feedback() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.effective_quality := NULL;
  NEW.feedback_rating := NULL;
  NEW.helpful_count := 0;
  NEW.harmful_count := 0;
  NEW.text_replaced_at := now();
  RETURN NEW;
END;
$$;

CREATE TRIGGER reflections_replaced_text_resets_feedback
  BEFORE UPDATE OF reflection_text, strategy_text, learning, adjustments ON reflections
  FOR EACH ROW
  WHEN (OLD.reflection_text IS DISTINCT FROM NEW.reflection_text
        OR OLD.strategy_text IS DISTINCT FROM NEW.strategy_text
        OR OLD.learning IS DISTINCT FROM NEW.learning
        OR OLD.adjustments IS DISTINCT FROM NEW.adjustments)
  EXECUTE FUNCTION reflector_reset_replaced_feedback();

-- Down Migration

DROP TRIGGER reflections_replaced_text_resets_feedback ON reflections;
DROP FUNCTION reflector_reset_replaced_feedback();
ALTER TABLE reflections DROP COLUMN text_replaced_at;
