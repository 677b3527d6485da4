import type { Rating } from "./effective-quality.js";

/** One vote on an agent's answer: the answer of one loop, as its self-evaluation judged it. */
export interface AnswerFeedbackInput {
  feedbackId: string;
  loopId: string;
  rating: Rating;
  comment: string | null;
  userId: string | null;
  /** When the user gave it; the latest vote decides the answer's effective quality. */
  at: Date;
}

/** The loop's answer as evaluated and as users rate it now. */
export interface RatedAnswer {
  eventId: string;
  judgedQuality: number;
  effectiveQuality: number;
  /** The effective quality is below the retry line (0.5): a 👎 always asks for another answer. */
  shouldRetry: boolean;
}

export type AnswerFeedbackResult =
  /** The tenant has no evaluated answer of that loop. */
  | { status: "not_found" }
  | { status: "conflict"; loopId: string; rating: Rating }
  | { status: "recorded" | "duplicate"; loopId: string; latestRating: Rating; answers: RatedAnswer[] };
