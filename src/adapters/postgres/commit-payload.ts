import { createHash } from "node:crypto";
import { recordMetadata } from "../../domain/memory/record-metadata.js";
import { strategyImportance } from "../../domain/memory/strategy-importance.js";
import { stableId } from "../../domain/stable-id.js";
import type { NewReflection, OutboundMessage, UnitOfWork } from "../../pipeline/ports.js";

/** A lesson's text and judgement, as `reflections` columns: what an insert writes and a merge replaces. */
function lessonColumns(r: NewReflection): Record<string, unknown> {
  return {
    reflection_text: r.reflection.reflectionText,
    strategy_text: r.reflection.strategyText,
    learning: r.reflection.learning,
    importance: r.reflection.importance,
    confidence: r.reflection.confidence,
    quality_score: r.qualityScore,
    verdict: r.verdict,
    metrics: r.metrics,
    violations: r.violations,
    tags: r.reflection.tags,
    error_category: r.reflection.errorCategory,
    patterns: r.reflection.patterns,
    adjustments: r.reflection.adjustments,
    generator: r.generator,
    attempts: r.attempts,
    embedding: r.embedding,
    attribution: r.reflection.attribution ?? null,
  };
}

/** SQLSTATE `reflector_commit` raises when the bias history moved under the loop decision. */
export const staleLoopStateCode = "RF001";

/**
 * The argument of `reflector_commit` (migrations/functions/reflector_commit.sql): rows keyed by
 * column name, so the function reads them with `jsonb_populate_record` of the table's type.
 */
export function commitPayload(
  unit: UnitOfWork,
  embeddingModel: string,
  outputs: OutboundMessage[],
): Record<string, unknown> {
  const { event, loop } = unit;
  const decidedAt = unit.decidedAt.toISOString();
  const payload: Record<string, unknown> = {
    tenantId: event.tenantId,
    eventId: event.eventId,
    loopId: event.loopId,
    signature: unit.signature,
    decidedAt,
    store: unit.store?.kind ?? null,
    outputs,
    sourceRecord: unit.sourceRecord,
    loopTrace: {
      tenant_id: event.tenantId,
      loop_id: event.loopId,
      root_loop_id: loop.rootLoopId,
      rerun_of: event.rerunOf ?? null,
      rerun_depth: loop.rerunDepth,
      rerun_count: loop.rerunCount,
      max_reruns: loop.maxReruns,
      outcome: event.outcome,
      alignment: loop.alignment,
      drift: loop.drift,
      reflection_fatigue: loop.fatigue,
      fatigue_increased: loop.fatigueIncreased,
      bias_echo: loop.biasEcho,
      repeated_tags: loop.repeatedTags,
      decision: loop.decision,
      new_loop_id: loop.newLoopId,
      rerun_reason: loop.reason,
      rerun_reason_detail: loop.reasonDetail,
      rerun_trigger: loop.triggers,
      force_finalize: loop.forceFinalize,
      overridden_by: loop.overriddenBy,
      orchestrator_persona: event.persona?.orchestrator ?? null,
      reflection_persona: event.persona?.reflection ?? null,
      task_text: unit.episode,
      source_event_id: event.eventId,
      decided_at: decidedAt,
    },
    biasCounts: Object.fromEntries(loop.biasCounts),
  };

  if (unit.store?.kind === "insert") {
    const r = unit.store.reflection;
    payload.reflection = {
      id: r.id,
      tenant_id: event.tenantId,
      project_id: event.projectId,
      signature: unit.signature,
      signature_type: r.signatureType,
      ...lessonColumns(r),
      source_event_id: event.eventId,
      outcome: event.outcome,
      first_seen_at: decidedAt,
      last_seen_at: decidedAt,
      embedding_model: embeddingModel,
      source_vector: r.sourceVector,
      metadata: recordMetadata(event, unit.signature ?? "", unit.decidedAt),
    };
    // Written only when the upsert inserted: the strategy row then belongs to `r.id`.
    if (r.reflection.strategyText) {
      payload.strategy = {
        id: stableId("strategy", r.id),
        reflection_id: r.id,
        tenant_id: event.tenantId,
        project_id: event.projectId,
        strategy_text: r.reflection.strategyText,
        importance: strategyImportance(r.reflection.importance),
        tags: [...new Set([...r.reflection.tags, "strategy"])],
      };
    }
  } else if (unit.store?.kind === "increment") {
    payload.reflectionId = unit.store.reflectionId;
    payload.rejudged = unit.store.rejudged;
  } else if (unit.store?.kind === "merge") {
    const m = unit.store;
    payload.reflectionId = m.reflectionId;
    payload.signature = m.signature;
    payload.sourceVector = m.sourceVector;
    // The text and judgement that now stand for the merged lesson; its ids and history stay.
    payload.replacement = m.replacement ? lessonColumns(m.replacement) : null;
    if (m.replacement) {
      payload.replacementStrategyImportance = strategyImportance(m.replacement.reflection.importance);
    }
  }

  if (unit.judgement && unit.signature) {
    const j = unit.judgement;
    payload.judgement = {
      tenant_id: event.tenantId,
      event_id: event.eventId,
      signature: unit.signature,
      verdict: j.verdict,
      quality_score: j.qualityScore,
      violations: j.violations,
      generator: j.generator,
      attempts: j.attempts,
      stored: j.stored,
      created_at: decidedAt,
    };
  }

  const evaluation = unit.answerEvaluation;
  if (evaluation && event.task.query && event.task.answer) {
    payload.answerEvaluation = {
      tenant_id: event.tenantId,
      event_id: event.eventId,
      loop_id: event.loopId,
      question: event.task.query,
      answer_hash: createHash("sha256").update(event.task.answer).digest("hex"),
      evaluator: evaluation.evaluator,
      quality: evaluation.quality,
      confidence: evaluation.confidence,
      relevance: evaluation.relevance,
      completeness: evaluation.completeness,
      issues: evaluation.issues,
      improvements: evaluation.improvements,
      should_retry: evaluation.shouldRetry,
      created_at: decidedAt,
    };
  }
  return payload;
}
