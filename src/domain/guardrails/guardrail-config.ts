import { z } from "zod";

/**
 * The loop guardrails' thresholds and fatigue steps, as one validated object
 * (docs/specification.md#loop-guardrails).
 */
export const GuardrailConfig = z.object({
  alignmentThreshold: z.number().min(0).max(1).default(0.75),
  driftThreshold: z.number().min(0).max(1).default(0.25),
  maxReruns: z.number().int().min(0).default(3),
  biasRepetitionThreshold: z.number().int().min(1).default(3),
  fatigueIncrement: z.number().min(0).max(1).default(0.15),
  fatigueImprovementThreshold: z.number().min(0).max(1).default(0.05),
  fatigueDecay: z.number().min(0).max(1).default(0.05),
  fatigueCriticalThreshold: z.number().min(0).max(1).default(0.5),
  maxFatigue: z.number().min(0).max(1).default(1),
});
export type GuardrailConfig = z.infer<typeof GuardrailConfig>;

export const defaultGuardrailConfig: GuardrailConfig = Object.freeze(GuardrailConfig.parse({}));
