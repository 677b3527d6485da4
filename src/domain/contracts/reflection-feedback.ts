import { z } from "zod";

/**
 * Consumed from `reflection.feedback`: a user's 👍/👎 on a stored lesson (seed 001). The feedback
 * id is the idempotency key: the same feedback delivered twice counts once.
 */
export const ReflectionFeedbackV1 = z.strictObject({
  schemaVersion: z.literal(1),
  feedbackId: z.string().trim().min(1).max(200),
  tenantId: z.string().trim().min(1).max(200),
  reflectionId: z.uuid(),
  rating: z.enum(["up", "down"]),
  comment: z.string().max(2_000).optional(),
  occurredAt: z.iso.datetime({ offset: true }),
  userId: z.string().trim().min(1).max(200).optional(),
});
export type ReflectionFeedback = z.infer<typeof ReflectionFeedbackV1>;
