import { z } from "zod";
import { boundedName, storableText } from "../../domain/contracts/task-completed.js";

// Ids refuse control characters and lone surrogates; the comment is made storable (no NUL byte).
const id = boundedName(200);

/** `POST /api/v1/feedback`: a user's 👍/👎 on a lesson. */
export const FeedbackBody = z.strictObject({
  reflection_id: z.uuid(),
  rating: z.enum(["up", "down"]),
  comment: storableText(2_000).nullable().default(null),
  feedback_id: id.optional().describe("idempotency key; a retry with the same id is counted once"),
  user_id: id.nullable().default(null),
});

const FeedbackCounts = z.object({
  helpful: z.number().int(),
  harmful: z.number().int(),
  latest_rating: z.enum(["up", "down"]).nullable(),
});

/** The answer to a vote: the lesson's quality and counts after it (`feedback-json.ts`). */
export const FeedbackAnswer = z
  .object({
    status: z.enum(["recorded", "duplicate"]),
    reflection_id: z.string(),
    judged_quality: z.number(),
    effective_quality: z.number(),
    served: z.boolean(),
    feedback: FeedbackCounts,
  })
  .meta({ id: "FeedbackResult" });
