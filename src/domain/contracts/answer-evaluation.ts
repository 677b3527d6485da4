import { z } from "zod";

/** An agent answer's evaluation, as the outcome events carry it (computed in domain/evaluation). */
export const AnswerEvaluation = z.object({
  evaluator: z.enum(["heuristic", "openai"]),
  quality: z.number().min(0).max(1),
  confidence: z.number().min(0).max(1),
  relevance: z.number().min(0).max(1),
  completeness: z.number().min(0).max(1),
  issues: z.array(z.string()),
  improvements: z.array(z.string()),
  shouldRetry: z.boolean(),
});
export type AnswerEvaluation = z.infer<typeof AnswerEvaluation>;
