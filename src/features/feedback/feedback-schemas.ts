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
