-- The write path's commit functions, as they are now: the one source of their definition.
--
-- Not a migration (node-pg-migrate reads only the files directly in migrations/): a migration
-- applies this file with the line `\ir functions/reflector_commit.sql`, which
-- src/adapters/postgres/sql-migrations.ts replaces with the file's text. To change a function,
-- change it here and add a migration that re-applies the file (see 1732000021000 for one whose
-- down restores the definitions it replaced). Every statement here must be re-runnable; a change
-- to a function's arguments or OUT columns needs a DROP FUNCTION in the migration before the file.
--
-- reflector_commit(u): one event's unit of work (src/adapters/postgres/commit-payload.ts builds
-- `u`), written once per event id. reflector_commit_many(us): the units of a group commit
-- (src/adapters/postgres/group-commit.ts), each in its own subtransaction.

CREATE OR REPLACE FUNCTION reflector_commit(u jsonb, OUT committed boolean, OUT occurrences integer, OUT outputs jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  tenant text := u->>'tenantId';
  event text := u->>'eventId';
  decided timestamptz := (u->>'decidedAt')::timestamptz;
  stored_id uuid;
  inserted boolean := false;
  stale boolean;
BEGIN
  -- Serialises two workers handling the same event id (same key as before this function, so
  -- processors of both versions exclude each other); the second sees the first's row. Every
  -- statement below takes a new snapshot, taken after the lock was granted.
  PERFORM pg_advisory_xact_lock(hashtextextended(tenant || '/' || event, 0));
  -- Already processed: what it stored, from which the caller builds the outputs it published.
  SELECT p.outputs, p.occurrences INTO outputs, occurrences
    FROM processed_events p WHERE p.tenant_id = tenant AND p.event_id = event;
  IF FOUND THEN
    committed := false;
    RETURN;
  END IF;

  -- An increment, a re-judgement or a merge (and the text that replaces a merged lesson) names a
  -- lesson by id: an id that is not this tenant's lesson matches no row of the UPDATE (its WHERE
  -- names the tenant), so nothing is stored, stored_id and occurrences stay NULL, and no tenant's
  -- event can count towards, or rewrite, another tenant's lesson. The event is still processed once.
  IF u->>'store' = 'insert' THEN
    INSERT INTO reflections AS t (id, tenant_id, project_id, signature, signature_type, reflection_text,
      strategy_text, learning, importance, confidence, quality_score, verdict, metrics, violations, tags,
      error_category, patterns, adjustments, generator, attempts, embedding, source_event_id, outcome,
      first_seen_at, last_seen_at, embedding_model, attribution, source_vector, metadata)
    SELECT r.id, r.tenant_id, r.project_id, r.signature, r.signature_type, r.reflection_text,
      r.strategy_text, r.learning, r.importance, r.confidence, r.quality_score, r.verdict, r.metrics,
      r.violations, r.tags, r.error_category, r.patterns, r.adjustments, r.generator, r.attempts,
      r.embedding, r.source_event_id, r.outcome, r.first_seen_at, r.last_seen_at, r.embedding_model,
      r.attribution, r.source_vector, coalesce(r.metadata, '{}')
      FROM jsonb_populate_record(NULL::reflections, u->'reflection') AS r
    ON CONFLICT (tenant_id, signature) DO UPDATE
      SET occurrences = t.occurrences + 1,
          last_seen_at = GREATEST(t.last_seen_at, EXCLUDED.last_seen_at)
    RETURNING t.id, t.occurrences, (t.xmax = 0) INTO stored_id, occurrences, inserted;
    IF inserted AND jsonb_typeof(u->'strategy') = 'object' THEN
      -- Dual storage: the strategy is kept on its own with importance +10%.
      INSERT INTO strategies (id, reflection_id, tenant_id, project_id, strategy_text, importance, tags)
      SELECT s.id, s.reflection_id, s.tenant_id, s.project_id, s.strategy_text, s.importance, s.tags
        FROM jsonb_populate_record(NULL::strategies, u->'strategy') AS s
      ON CONFLICT (reflection_id) DO NOTHING;
    END IF;
  ELSIF u->>'store' = 'increment' AND jsonb_typeof(u->'rejudged') = 'object' THEN
    -- The lesson's evidence changed: its verdict, metrics and violations are the new judgement's.
    UPDATE reflections AS t SET occurrences = t.occurrences + 1, last_seen_at = GREATEST(t.last_seen_at, decided),
           verdict = u->'rejudged'->>'verdict', quality_score = (u->'rejudged'->>'qualityScore')::real,
           metrics = u->'rejudged'->'metrics', violations = u->'rejudged'->'violations'
     WHERE t.id = (u->>'reflectionId')::uuid AND t.tenant_id = tenant
    RETURNING t.id, t.occurrences INTO stored_id, occurrences;
  ELSIF u->>'store' = 'increment' THEN
    UPDATE reflections AS t SET occurrences = t.occurrences + 1, last_seen_at = GREATEST(t.last_seen_at, decided)
     WHERE t.id = (u->>'reflectionId')::uuid AND t.tenant_id = tenant
    RETURNING t.id, t.occurrences INTO stored_id, occurrences;
  ELSIF u->>'store' = 'merge' THEN
    -- A new lesson that is the same as a stored one: its signature leads to the stored lesson from
    -- now on, the occurrence counts, and a better-judged text replaces the stored one.
    UPDATE reflections AS t SET occurrences = t.occurrences + 1, last_seen_at = GREATEST(t.last_seen_at, decided),
           merged_signatures = CASE WHEN (u->>'signature') = ANY(t.merged_signatures) THEN t.merged_signatures
                                    ELSE t.merged_signatures || (u->>'signature') END
     WHERE t.id = (u->>'reflectionId')::uuid AND t.tenant_id = tenant
    RETURNING t.id, t.occurrences INTO stored_id, occurrences;
    IF stored_id IS NOT NULL THEN
      INSERT INTO reflection_aliases (tenant_id, signature, reflection_id, source_vector, created_at)
      VALUES (tenant, u->>'signature', stored_id,
              ARRAY(SELECT jsonb_array_elements_text(coalesce(u->'sourceVector', '[]'))::real), decided)
      ON CONFLICT (tenant_id, signature) DO NOTHING;
      IF jsonb_typeof(u->'replacement') = 'object' THEN
        UPDATE reflections AS t SET reflection_text = r.reflection_text, strategy_text = r.strategy_text,
               learning = r.learning, importance = r.importance, confidence = r.confidence,
               quality_score = r.quality_score, verdict = r.verdict, metrics = r.metrics, violations = r.violations,
               tags = r.tags, error_category = r.error_category, patterns = r.patterns, adjustments = r.adjustments,
               generator = r.generator, attempts = r.attempts, embedding = r.embedding,
               attribution = r.attribution
          FROM jsonb_populate_record(NULL::reflections, u->'replacement') AS r
         WHERE t.id = stored_id;
        UPDATE strategies AS s SET strategy_text = r.strategy_text, importance = (u->>'replacementStrategyImportance')::real
          FROM jsonb_populate_record(NULL::reflections, u->'replacement') AS r
         WHERE s.reflection_id = stored_id AND r.strategy_text IS NOT NULL;
      END IF;
    END IF;
  END IF;

  INSERT INTO loop_traces AS t (tenant_id, loop_id, root_loop_id, rerun_of, rerun_depth, rerun_count, max_reruns,
    outcome, alignment, drift, reflection_fatigue, fatigue_increased, bias_echo, repeated_tags, decision,
    new_loop_id, rerun_reason, rerun_reason_detail, rerun_trigger, force_finalize, overridden_by,
    orchestrator_persona, reflection_persona, task_text, source_event_id, decided_at)
  SELECT l.tenant_id, l.loop_id, l.root_loop_id, l.rerun_of, l.rerun_depth, l.rerun_count, l.max_reruns,
    l.outcome, l.alignment, l.drift, l.reflection_fatigue, l.fatigue_increased, l.bias_echo, l.repeated_tags,
    l.decision, l.new_loop_id, l.rerun_reason, l.rerun_reason_detail, l.rerun_trigger, l.force_finalize,
    l.overridden_by, l.orchestrator_persona, l.reflection_persona, l.task_text, l.source_event_id, l.decided_at
    FROM jsonb_populate_record(NULL::loop_traces, u->'loopTrace') AS l
  ON CONFLICT (tenant_id, loop_id) DO UPDATE SET
    root_loop_id = EXCLUDED.root_loop_id, rerun_of = EXCLUDED.rerun_of, rerun_depth = EXCLUDED.rerun_depth,
    rerun_count = EXCLUDED.rerun_count, max_reruns = EXCLUDED.max_reruns, outcome = EXCLUDED.outcome,
    alignment = EXCLUDED.alignment, drift = EXCLUDED.drift, reflection_fatigue = EXCLUDED.reflection_fatigue,
    fatigue_increased = EXCLUDED.fatigue_increased, bias_echo = EXCLUDED.bias_echo,
    repeated_tags = EXCLUDED.repeated_tags, decision = EXCLUDED.decision, new_loop_id = EXCLUDED.new_loop_id,
    rerun_reason = EXCLUDED.rerun_reason, rerun_reason_detail = EXCLUDED.rerun_reason_detail,
    rerun_trigger = EXCLUDED.rerun_trigger, force_finalize = EXCLUDED.force_finalize,
    overridden_by = EXCLUDED.overridden_by, orchestrator_persona = EXCLUDED.orchestrator_persona,
    reflection_persona = EXCLUDED.reflection_persona, task_text = EXCLUDED.task_text,
    source_event_id = EXCLUDED.source_event_id, decided_at = EXCLUDED.decided_at;

  IF jsonb_typeof(u->'biasCounts') = 'object' AND u->'biasCounts' <> '{}' THEN
    -- The history is per tenant, so families running at once can raise the same tag: the row
    -- lock orders them, and a count other than the one decided on means the decision (echo or
    -- not) was made from stale state. The exception undoes everything; the caller decides again.
    WITH counted AS (
      INSERT INTO bias_tag_history AS h (tenant_id, tag, occurrences, last_loop_id, first_seen_at, last_seen_at)
      SELECT tenant, tag, 1, u->>'loopId', decided, decided FROM jsonb_object_keys(u->'biasCounts') AS tag
      ON CONFLICT (tenant_id, tag) DO UPDATE SET occurrences = h.occurrences + 1,
        last_loop_id = EXCLUDED.last_loop_id, last_seen_at = EXCLUDED.last_seen_at
      RETURNING h.tag, h.occurrences
    )
    SELECT bool_or(c.occurrences IS DISTINCT FROM (u->'biasCounts'->>c.tag)::integer) INTO stale FROM counted AS c;
    IF stale THEN
      RAISE EXCEPTION 'loop state changed under the decision' USING ERRCODE = 'RF001';
    END IF;
  END IF;

  IF jsonb_typeof(u->'judgement') = 'object' THEN
    INSERT INTO reflection_judgements (tenant_id, event_id, signature, verdict, quality_score, violations,
      generator, attempts, stored, created_at)
    SELECT j.tenant_id, j.event_id, j.signature, j.verdict, j.quality_score, j.violations, j.generator,
      j.attempts, j.stored, j.created_at
      FROM jsonb_populate_record(NULL::reflection_judgements, u->'judgement') AS j
    ON CONFLICT DO NOTHING;
  END IF;

  IF jsonb_typeof(u->'answerEvaluation') = 'object' THEN
    INSERT INTO answer_evaluations (tenant_id, event_id, loop_id, question, answer_hash, evaluator, quality,
      confidence, relevance, completeness, issues, improvements, should_retry, created_at)
    SELECT a.tenant_id, a.event_id, a.loop_id, a.question, a.answer_hash, a.evaluator, a.quality,
      a.confidence, a.relevance, a.completeness, a.issues, a.improvements, a.should_retry, a.created_at
      FROM jsonb_populate_record(NULL::answer_evaluations, u->'answerEvaluation') AS a
    ON CONFLICT DO NOTHING;
  END IF;

  -- The outputs as the caller built them before the count was known, and the count: the caller
  -- builds what it publishes from the two (withOccurrences in commit-payload.ts), now and on replay.
  INSERT INTO processed_events (tenant_id, event_id, loop_id, signature, reflection_id, outputs, occurrences,
    processed_at, source_record)
  VALUES (tenant, event, u->>'loopId', u->>'signature', stored_id, u->'outputs', occurrences, decided,
    u->>'sourceRecord');
  committed := true;
  -- The caller already holds the outputs; sending them back would only cost bytes and parsing.
  outputs := NULL;
END;
$$;

-- Group commit: the units of work of several events in one statement, so one transaction (one
-- WAL flush) carries them all. Each unit runs in its own subtransaction: a unit that fails (its
-- loop state moved under it, a deadlock with another instance, bad data) is rolled back alone and
-- reported with its SQLSTATE; the caller commits it again on its own.
CREATE OR REPLACE FUNCTION reflector_commit_many(us jsonb)
RETURNS TABLE (i integer, committed boolean, occurrences integer, outputs jsonb, failed_state text)
LANGUAGE plpgsql AS $$
DECLARE
  u jsonb;
  n integer := 0;
  r record;
BEGIN
  FOR u IN SELECT value FROM jsonb_array_elements(us) LOOP
    i := n;
    BEGIN
      SELECT c.committed, c.occurrences, c.outputs INTO r FROM reflector_commit(u) AS c;
      committed := r.committed;
      occurrences := r.occurrences;
      outputs := r.outputs;
      failed_state := NULL;
    EXCEPTION WHEN OTHERS THEN
      committed := false;
      occurrences := NULL;
      outputs := NULL;
      failed_state := SQLSTATE;
    END;
    RETURN NEXT;
    n := n + 1;
  END LOOP;
END;
$$;
