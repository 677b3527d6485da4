import type { SpendGate } from "./ports.js";

/**
 * The lessons feature's check of which lessons apply to a task (`POST /api/v1/lessons/for-task`,
 * src/features/lessons/lessons-for-task.ts), as a model answers it (src/adapters/llm/), and the
 * check within the tenant's budget. Not a port of the task processor: it never runs on an event.
 */

/** A task an agent is about to start, as the lesson check reads it. */
export interface LessonCheckTask {
  task: string;
  goal?: string | undefined;
  tools?: readonly string[] | undefined;
}

/** A candidate lesson, as the lesson check reads it: its advice, adjustments and tags. */
export interface LessonCheckCandidate {
  /** The lesson's strategy, or its learning when it has none. */
  advice: string;
  adjustments: readonly string[];
  tags: readonly string[];
}

/**
 * Which of the lessons nearest to a task in meaning apply to it, as a model reads them
 * (`LESSONS_FOR_TASK_CHECK=model`).
 */
export interface LessonCheck {
  /**
   * The candidates' indexes that apply, most useful first (possibly none); null when the model
   * could not be asked or gave no usable answer, and the caller falls back to meaning alone.
   * `signal`: the caller gave up (the agent went away); the check is aborted.
   */
  applies(
    tenantId: string,
    task: LessonCheckTask,
    candidates: readonly LessonCheckCandidate[],
    signal?: AbortSignal,
  ): Promise<number[] | null>;
}

/**
 * The lesson check within the tenant's LLM budget: a tenant the spend gate does not admit to the
 * model (over budget, or the gate unreachable) is answered by meaning alone (null), whatever
 * `LLM_OVER_BUDGET` says: an agent waiting for its lessons is never held for the budget.
 */
export function lessonCheckWithinBudget(check: LessonCheck, gate: Pick<SpendGate, "admit">): LessonCheck {
  return {
    async applies(tenantId, task, candidates, signal) {
      const admitted = await gate.admit(tenantId).catch(() => "offline" as const);
      if (admitted !== "model") return null;
      return check.applies(tenantId, task, candidates, signal);
    },
  };
}
