import {
  cloudEventTypes,
  type DecisionLesson,
  type LoopDecision,
  type TaskCompleted,
} from "../domain/contracts/index.js";
import type { LoopDecisionResult } from "../domain/guardrails/decide-loop.js";
import { lessonPrompt, servedLesson, type PromptableLesson } from "../domain/lessons/lesson-prompt.js";
import { stableId } from "../domain/stable-id.js";
import type { OutboundMessage } from "./ports.js";
import type { MemoryOutcome } from "./processing-state.js";

/** A lesson written, merged or recalled for the failure, as the store knows it. */
export interface LessonForRerun extends PromptableLesson {
  reflectionId: string;
}

/** The lessons a decision carries: only a rerun carries any (the agent applies them on its next attempt). */
export function rerunLessons(loop: LoopDecisionResult, lessons: readonly LessonForRerun[]): DecisionLesson[] {
  if (loop.decision !== "rerun") return [];
  return lessons.map((lesson) => ({
    reflectionId: lesson.reflectionId,
    // Only what the lesson screen passes is served, here as in the prompt.
    ...servedLesson(lesson),
    prompt: lessonPrompt(lesson),
  }));
}

/**
 * The lesson memory filed the failure under, if it keeps one: the recalled lesson, the new one it
 * inserts, or the stored one a new lesson merges into (with the text that replaces it, or the new
 * text, which says the same thing). None when nothing was kept.
 */
export function lessonsOfMemory(outcome: MemoryOutcome | null | undefined): LessonForRerun[] {
  const op = outcome?.op;
  if (!outcome || !op) return [];
  const of = (
    reflectionId: string,
    r: { strategyText: string | null; adjustments: string[]; learning: string },
  ) => [{ reflectionId, strategyText: r.strategyText, adjustments: r.adjustments, learning: r.learning }];
  if (op.kind === "increment" && outcome.matched.known)
    return of(op.reflectionId, outcome.matched.known.reflection);
  if (op.kind === "insert") return of(op.reflection.id, op.reflection.reflection);
  if (op.kind === "merge") {
    const text = op.replacement?.reflection ?? outcome.judged?.reflection;
    return text ? of(op.reflectionId, text) : [];
  }
  return [];
}

/** The `loop.decision` value for one event; one id per (tenant, event), so a replay repeats it. */
export function decisionValue(
  event: TaskCompleted,
  loop: LoopDecisionResult,
  now: Date,
  lessons: readonly LessonForRerun[] = [],
): LoopDecision {
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
    lessons: rerunLessons(loop, lessons),
  };
}

/** The same decision as an outbound message, keyed by the loop (Kafka and HTTP paths alike). */
export function decisionMessage(
  event: TaskCompleted,
  loop: LoopDecisionResult,
  now: Date,
  lessons: readonly LessonForRerun[] = [],
): OutboundMessage {
  const value = decisionValue(event, loop, now, lessons);
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
