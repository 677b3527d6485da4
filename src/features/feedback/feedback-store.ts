import type { FeedbackInput, FeedbackResult } from "../../pipeline/ports.js";

/**
 * Records a vote on a lesson of the caller's tenant, from HTTP or the feedback topic (the
 * feedback consumer takes the same function). Implemented by
 * `src/adapters/postgres/pg-feedback-store.ts`.
 */
export interface FeedbackStore {
  /** Idempotent by feedback id; recomputes the lesson's effective quality from its latest vote. */
  recordFeedback(tenantId: string, input: FeedbackInput): Promise<FeedbackResult>;
}
