import { Counter, type Registry } from "prom-client";
import type { AppliedOutcomeStore } from "../domain/feedback/applied-outcome.js";

/**
 * `reflector_lesson_applied_outcomes_total{result}`: lessons that reruns carried or tasks retrieved
 * for themselves, and that helped (`helped`) or failed again (`failed_again`), counted as the
 * store records them. The counts per lesson are in the lessons API (`applied`); here only the
 * bounded label.
 */
export function countAppliedOutcomes(store: AppliedOutcomeStore, registry: Registry): AppliedOutcomeStore {
  const outcomes = new Counter({
    name: "reflector_lesson_applied_outcomes_total",
    help: "Lessons carried by a rerun decision or retrieved for a task, whose task succeeded (helped) or failed the same way again (failed_again).",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const retrieved = store.lessonsRetrievedBy?.bind(store);
  return {
    lessonsCarriedTo: (tenantId, loopId) => store.lessonsCarriedTo(tenantId, loopId),
    ...(retrieved ? { lessonsRetrievedBy: retrieved } : {}),
    recordApplied: async (tenantId, eventId, recorded, at) => {
      await store.recordApplied(tenantId, eventId, recorded, at);
      for (const o of recorded) outcomes.inc({ result: o.result });
    },
  };
}
