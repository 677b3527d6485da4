import { cloudEventTypes, type LoopDecision, type TaskCompleted } from "../domain/contracts/index.js";
import type { LoopDecisionResult } from "../domain/guardrails/decide-loop.js";
import { stableId } from "../domain/stable-id.js";
import type { OutboundMessage } from "./ports.js";

/** The `loop.decision` value for one event; one id per (tenant, event), so a replay repeats it. */
export function decisionValue(event: TaskCompleted, loop: LoopDecisionResult, now: Date): LoopDecision {
  return {
    schemaVersion: 1,
    decisionId: stableId("decision", event.tenantId, event.eventId),
    sourceEventId: event.eventId,
    tenantId: event.tenantId,
    projectId: event.projectId,
    loopId: event.loopId,
    rootLoopId: loop.rootLoopId,
    decision: loop.decision,
    newLoopId: loop.newLoopId,
    rerunCount: loop.rerunCount,
    maxReruns: loop.maxReruns,
    reason: loop.reason,
    reasonDetail: loop.reasonDetail,
    triggers: loop.triggers,
    fatigue: loop.fatigue,
    fatigueIncreased: loop.fatigueIncreased,
    biasEcho: loop.biasEcho,
    repeatedTags: loop.repeatedTags,
    forceFinalize: loop.forceFinalize,
    overriddenBy: loop.overriddenBy,
    alignment: loop.alignment,
    drift: loop.drift,
    decidedAt: now.toISOString(),
  };
}

/** The same decision as an outbound message, keyed by the loop (Kafka and HTTP paths alike). */
export function decisionMessage(event: TaskCompleted, loop: LoopDecisionResult, now: Date): OutboundMessage {
  const value = decisionValue(event, loop, now);
  return {
    role: "loopDecision",
    key: event.loopId,
    id: value.decisionId,
    type: cloudEventTypes["loop-decision.v1"],
    subject: event.loopId,
    time: value.decidedAt,
    value,
  };
}
