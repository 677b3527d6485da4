import type {
  AnswerFeedbackInput,
  AnswerFeedbackResult,
  FeedbackInput,
  FeedbackResult,
} from "../../pipeline/ports.js";

/**
 * Records a vote on a lesson of the caller's tenant, from HTTP or the feedback topic (the
 * feedback consumer takes the same function). Implemented by
 * `src/adapters/postgres/pg-feedback-store.ts`.
 */
export interface FeedbackStore {
  /** Idempotent by feedback id; recomputes the lesson's effective quality from its latest vote. */
  recordFeedback(tenantId: string, input: FeedbackInput): Promise<FeedbackResult>;
  /**
   * A vote on a loop's answer: idempotent by feedback id; the latest vote moves the answer's
   * self-evaluation (its effective quality), which adaptive prompting reads. Absent: the route
   * answers 503.
   */
  recordAnswerFeedback?(tenantId: string, input: AnswerFeedbackInput): Promise<AnswerFeedbackResult>;
}
