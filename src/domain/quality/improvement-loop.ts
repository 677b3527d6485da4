import type { Reflection } from "../contracts/index.js";
import type { ValidationResult } from "./validate-reflection.js";

export interface ImprovementFeedback {
  violations: string[];
  missingFields: string[];
  invalidPatterns: string[];
}

export interface ImprovementLoopOptions {
  maxAttempts: number;
  /** `feedback` is the previous attempt's validation, absent on the first attempt. */
  generate(attempt: number, feedback: ImprovementFeedback | undefined): Promise<Reflection>;
  evaluate(reflection: Reflection): Promise<ValidationResult>;
}

export interface ImprovementLoopResult {
  reflection: Reflection;
  validation: ValidationResult;
  attempts: number;
  history: ValidationResult[];
}

/**
 * The improvement loop (docs/specification.md#improvement-loop): generate, validate, and on failure
 * try again (up to maxAttempts) telling the generator what to fix. Stops at the first valid
 * attempt, or at the first one whose remaining violations no rewrite can fix; otherwise keeps the
 * best scoring attempt rather than the last, since a retry can be worse.
 */
export async function runImprovementLoop(options: ImprovementLoopOptions): Promise<ImprovementLoopResult> {
  const history: ValidationResult[] = [];
  let best: { reflection: Reflection; validation: ValidationResult } | undefined;
  let feedback: ImprovementFeedback | undefined;
  for (let attempt = 1; attempt <= options.maxAttempts; attempt += 1) {
    const reflection = await options.generate(attempt, feedback);
    const validation = await options.evaluate(reflection);
    history.push(validation);
    if (!best || validation.qualityScore > best.validation.qualityScore) best = { reflection, validation };
    if (validation.isValid) return { reflection, validation, attempts: attempt, history };
    // What is left (unproven patterns, a lesson already stored) is not the text's fault.
    if (!validation.retryable) break;
    feedback = {
      violations: validation.violations,
      missingFields: validation.missingFields,
      invalidPatterns: validation.invalidPatterns,
    };
  }
  if (!best) throw new Error("maxAttempts must be at least 1");
  return { ...best, attempts: history.length, history };
}
