import type { TaskCompleted } from "../contracts/index.js";

/**
 * What a stored lesson keeps of the event it was written for (docs/specification.md#the-records-metadata):
 * the memory's metadata (outcome, task description, event count, session), the reflection's
 * context (what was attempted, the query, the iteration, how much the agent's own revision
 * improved the answer) and its relationships (the trace events it rests on, the memories the agent
 * named as related). Kept in `reflections.metadata` and returned by the lessons API; keys are
 * snake_case, as every `/api/v1` answer.
 */
export interface RecordMetadata {
  outcome: string;
  task_description: string;
  event_count: number;
  session_id: string | null;
  agent_id: string;
  task_id: string;
  context: {
    error_signature: string;
    /** The question the task answered, first 200 characters; null without one. */
    original_query: string | null;
    /** The agent's own evaluator iteration (`evaluation.iteration`); null when not given. */
    iteration_count: number | null;
    /** `scores.qualityAfter − scores.qualityBefore`; null unless both are given. */
    quality_improvement: number | null;
    /** What was being attempted: the task description, first 200 characters. */
    reflection_context: string;
  };
  relationships: {
    /** The event the lesson was written for. */
    source_event_id: string;
    /** The trace's own step ids the reflection was written from (at most 100). */
    source_step_ids: string[];
    /** The memories the agent named as related (`relatedMemoryIds`), at most 50. */
    related_memory_ids: string[];
  };
  generated_at: string;
}

export const metadataTextLimit = 2_000;
export const metadataContextLimit = 200;
export const metadataStepIdLimit = 100;

const cut = (text: string, limit: number) => (text.length > limit ? text.slice(0, limit) : text);

/** The metadata of a lesson written for `event`, filed under `signature`, at `generatedAt`. */
export function recordMetadata(event: TaskCompleted, signature: string, generatedAt: Date): RecordMetadata {
  const before = event.scores?.qualityBefore;
  const after = event.scores?.qualityAfter;
  return {
    outcome: event.outcome,
    task_description: cut(event.task.description, metadataTextLimit),
    event_count: event.events.length,
    session_id: event.sessionId ?? null,
    agent_id: event.agentId,
    task_id: event.taskId,
    context: {
      error_signature: signature,
      original_query: event.task.query ? cut(event.task.query, metadataContextLimit) : null,
      iteration_count: event.evaluation?.iteration ?? null,
      quality_improvement:
        before !== undefined && after !== undefined ? Math.round((after - before) * 1e4) / 1e4 : null,
      reflection_context: cut(event.task.description, metadataContextLimit),
    },
    relationships: {
      source_event_id: event.eventId,
      source_step_ids: [...new Set(event.events.map((e) => e.eventId))].slice(0, metadataStepIdLimit),
      related_memory_ids: [...new Set(event.relatedMemoryIds ?? [])],
    },
    generated_at: generatedAt.toISOString(),
  };
}

/**
 * The metadata of a pattern lesson dreaming wrote over `group`: a `partial` outcome (exploratory),
 * its sources as the related memories, no session nor trace of its own.
 */
export function patternMetadata(
  group: { label: string; signature: string; sources: readonly { id: string }[] },
  at: Date,
): RecordMetadata {
  const description = `Analyzing patterns in recent memories: ${group.label}`;
  return {
    outcome: "partial",
    task_description: cut(description, metadataTextLimit),
    event_count: group.sources.length,
    session_id: null,
    agent_id: "reflector",
    task_id: "dreaming",
    context: {
      error_signature: group.signature,
      original_query: null,
      iteration_count: null,
      quality_improvement: null,
      reflection_context: cut(description, metadataContextLimit),
    },
    relationships: {
      source_event_id: "dreaming",
      source_step_ids: [],
      related_memory_ids: group.sources.map((s) => s.id),
    },
    generated_at: at.toISOString(),
  };
}
