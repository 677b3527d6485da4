import type { Attribution } from "../../domain/contracts/index.js";
import { servedMinQuality } from "../../domain/feedback/effective-quality.js";
import type { ReflectionView } from "../../domain/lessons/lesson-view.js";

/** The lessons feature's answers (snake_case, like the orchestrator endpoints). */

export function attributionJson(attribution: Attribution | null | undefined) {
  if (!attribution) return null;
  return {
    ...(attribution.eventId !== undefined ? { event_id: attribution.eventId } : {}),
    ...(attribution.stepIndex !== undefined ? { step_index: attribution.stepIndex } : {}),
    ...(attribution.actor !== undefined ? { actor: attribution.actor } : {}),
    ...(attribution.toolName !== undefined ? { tool_name: attribution.toolName } : {}),
    confidence: attribution.confidence,
    ...(attribution.evidence !== undefined ? { evidence: attribution.evidence } : {}),
  };
}

export function feedbackCountsJson(feedback: ReflectionView["feedback"]) {
  return { helpful: feedback.helpful, harmful: feedback.harmful, latest_rating: feedback.latestRating };
}

function effectivenessJson(e: ReflectionView["effectiveness"]) {
  return {
    recurrences_after_publication: e.recurrencesAfterPublication,
    days_since_publication: e.daysSincePublication,
    recurrences_per_week: e.recurrencesPerWeek,
    verdict: e.verdict,
  };
}

/** A stored lesson as `GET /api/v1/reflections` lists it. */
export function reflectionJson(view: ReflectionView) {
  return {
    id: view.id,
    signature: view.signature,
    project_id: view.projectId,
    reflection_text: view.reflectionText,
    strategy_text: view.strategyText,
    strategy_id: view.strategy?.id ?? null,
    strategy_importance: view.strategy?.importance ?? null,
    learning: view.learning,
    importance: view.importance,
    confidence: view.confidence,
    judged_quality: view.judgedQuality,
    effective_quality: view.effectiveQuality,
    served: view.served,
    verdict: view.verdict,
    tags: view.tags,
    error_category: view.errorCategory,
    attribution: attributionJson(view.attribution),
    occurrences: view.occurrences,
    first_seen_at: view.firstSeenAt,
    last_seen_at: view.lastSeenAt,
    feedback: feedbackCountsJson(view.feedback),
    effectiveness: effectivenessJson(view.effectiveness),
    rank: view.rank,
    metadata: view.metadata ?? null,
  };
}

/** "Have I seen this error before?" with the lesson, or why it is withheld. */
export function signatureJson(signature: string, found: ReflectionView) {
  return {
    signature,
    seen_before: true,
    occurrences: found.occurrences,
    first_seen_at: found.firstSeenAt,
    last_seen_at: found.lastSeenAt,
    // A lesson users rated down below the serving floor is withheld, not handed out as advice.
    lesson: found.served
      ? {
          reflection_id: found.id,
          learning: found.learning,
          strategy: found.strategyText,
          reflection_text: found.reflectionText,
          judged_quality: found.judgedQuality,
          effective_quality: found.effectiveQuality,
          attribution: attributionJson(found.attribution),
          metadata: found.metadata ?? null,
        }
      : null,
    lesson_withheld: found.served
      ? null
      : {
          reflection_id: found.id,
          reason: `effective quality ${found.effectiveQuality.toFixed(2)} after user feedback is below ${String(servedMinQuality)}`,
          judged_quality: found.judgedQuality,
          effective_quality: found.effectiveQuality,
        },
    feedback: feedbackCountsJson(found.feedback),
    effectiveness: effectivenessJson(found.effectiveness),
  };
}
