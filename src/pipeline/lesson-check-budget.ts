import type { LessonCheck, SpendGate } from "./ports.js";

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
