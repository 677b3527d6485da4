import type { FeedbackResult } from "../../pipeline/ports.js";

/** A recorded (or repeated) vote and the lesson's quality and counts after it. */
export function feedbackJson(result: Extract<FeedbackResult, { status: "recorded" | "duplicate" }>) {
  return {
    status: result.status,
    reflection_id: result.reflectionId,
    judged_quality: result.judgedQuality,
    effective_quality: result.effectiveQuality,
    served: result.served,
    feedback: { helpful: result.helpful, harmful: result.harmful, latest_rating: result.latestRating },
  };
}
