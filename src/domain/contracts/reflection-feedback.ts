import { z } from "zod";
import { boundedName, storableText } from "./task-completed.js";

/**
 * Consumed from `reflection.feedback`: a user's 👍/👎 on a stored lesson. The feedback
 * id is the idempotency key: the same feedback delivered twice counts once.
 */
export const ReflectionFeedbackV1 = z.strictObject({
  schemaVersion: z.literal(1),
  feedbackId: boundedName(200),
  tenantId: boundedName(200),
  reflectionId: z.uuid(),
  rating: z.enum(["up", "down"]),
  comment: storableText(2_000).optional(),
  occurredAt: z.iso.datetime({ offset: true }),
  userId: boundedName(200).optional(),
});
export type ReflectionFeedback = z.infer<typeof ReflectionFeedbackV1>;
