import { cloudEventTypes, type ReflectionOutcome, type TaskCompleted } from "../domain/contracts/index.js";
import { stableId } from "../domain/stable-id.js";
import type { AnswerEvaluation } from "../domain/evaluation/answer-evaluation.js";
import type { OutboundMessage, ReflectionGenerator } from "./ports.js";
import type { EventFacts, MemoryOutcome } from "./processing-state.js";

/** What an outcome says beyond the event it answers. */
export type OutcomeBody = Omit<
  ReflectionOutcome,
  | "schemaVersion"
  | "outcomeId"
  | "sourceEventId"
  | "tenantId"
  | "projectId"
  | "agentId"
  | "loopId"
  | "taskId"
  | "signature"
  | "producedAt"
>;

/** The `reflection.accepted` / `reflection.rejected` message of one event; one id per (tenant, event). */
export function outcomeMessage(
  event: TaskCompleted,
  signature: string,
  body: OutcomeBody,
  now: Date,
): OutboundMessage {
  const outcomeId = stableId("outcome", event.tenantId, event.eventId);
  const value: ReflectionOutcome = {
    schemaVersion: 1,
    outcomeId,
    sourceEventId: event.eventId,
    tenantId: event.tenantId,
    projectId: event.projectId,
    agentId: event.agentId,
    loopId: event.loopId,
    taskId: event.taskId,
    signature,
    producedAt: now.toISOString(),
    ...body,
  };
  return {
    role: body.verdict === "rejected" ? "reflectionRejected" : "reflectionAccepted",
    key: event.loopId,
    id: outcomeId,
    type: cloudEventTypes["reflection-outcome.v1"],
    subject: event.loopId,
    time: value.producedAt,
    value,
  };
}

/**
 * What an event's outcome says: the recalled lesson (judged again if its evidence changed, with
 * this trace's own attribution), or the new reflection with what memory did with it. Built before
 * the commit, so its `occurrences` is the count expected; `withOccurrences` applies the count the
 * commit stored.
 */
export function outcomeBody(
  memory: MemoryOutcome,
  context: {
    facts: EventFacts;
    answerEvaluation: AnswerEvaluation | null;
    generator: ReflectionGenerator["name"];
  },
): OutcomeBody {
  const { matched, judged, rejudged, op, created } = memory;
  const { facts, answerEvaluation } = context;
  const signatureLevel = matched.candidate.level;
  const evaluationFinding = facts.finding
    ? {
        errorType: facts.finding.errorType,
        qualityDelta: facts.finding.qualityDelta,
        changedBehaviour: facts.finding.changedBehaviour,
      }
    : null;
  const known = matched.known;
  if (known || !judged) {
    if (!known) throw new Error("an outcome needs a recalled or a judged reflection");
    return {
      verdict: rejudged?.verdict ?? known.verdict,
      reflectionId: known.id,
      stored: true,
      deduplicated: true,
      occurrences: known.occurrences + 1,
      metrics: rejudged?.metrics ?? known.metrics,
      qualityScore: rejudged?.qualityScore ?? known.qualityScore,
      violations: rejudged?.violations ?? known.violations,
      attempts: 0,
      generator: "reused",
      // The lesson is the stored one; where this trace went wrong is this trace's own.
      reflection: { ...known.reflection, ...(facts.attribution ? { attribution: facts.attribution } : {}) },
      notStoredReason: null,
      answerEvaluation,
      evaluationFinding,
      memory: { action: "reuse", similarity: matched.similarity, signatureLevel },
    };
  }
  const storage = judged.storage;
  const merged = storage.action === "update" || storage.action === "noop" ? storage : null;
  return {
    verdict: judged.verdict,
    reflectionId: merged ? merged.into : (created?.id ?? null),
    stored: op !== null,
    // Merged into a stored lesson (or, once counted, another worker stored the same signature first).
    deduplicated: merged !== null,
    occurrences: 1,
    metrics: judged.validation.metrics,
    qualityScore: judged.validation.qualityScore,
    violations: judged.validation.violations,
    attempts: judged.attempts,
    generator: context.generator,
    reflection: judged.reflection,
    notStoredReason: storage.action === "none" ? storage.reason : null,
    answerEvaluation,
    evaluationFinding,
    memory: {
      action: judged.verdict === "rejected" ? "none" : storage.action,
      similarity: merged ? merged.similarity : null,
      signatureLevel,
    },
  };
}

/**
 * The outputs to publish, from the ones built before the commit and the occurrence count the
 * commit stored beside them (null when it counted nothing): the count becomes the outcome's
 * `occurrences` (the outcome is the first output that is not the loop decision), and an outcome
 * that tells whether it was `deduplicated` was when counted more than once. A new lesson counted
 * more than once was stored first by another worker under the same signature (and the same id:
 * a lesson's id comes from its tenant and signature) between this event's match and its commit:
 * memory merged it and only counted it (`noop`), it did not `add` it. The one rule, applied after
 * a commit (`decideAndCommit`) and when an event id found committed publishes again (`recall`).
 */
export function withOccurrences(outputs: OutboundMessage[], occurrences: number | null): OutboundMessage[] {
  const index = outputs.findIndex((o) => o.role !== "loopDecision");
  const outcome = outputs[index];
  if (occurrences === null || !outcome) return outputs;
  const value: Record<string, unknown> = { ...outcome.value, occurrences };
  if ("deduplicated" in value) value.deduplicated = value.deduplicated === true || occurrences > 1;
  const memory = value.memory as { action?: unknown } | undefined;
  if (memory?.action === "add" && occurrences > 1) value.memory = { ...memory, action: "noop" };
  return outputs.map((o, i) => (i === index ? { ...o, value } : o));
}
