import { isPatternViolation, type ValidationResult } from "./validate-reflection.js";

/**
 * The quality rules' exception classes, for code that embeds the judge and wants to catch or sort
 * a failed reflection by what is wrong with it: the base class, and one per rule a rewrite can be
 * asked to fix. The judge itself does not throw (a failed reflection is a verdict, not an error);
 * `qualityErrorsOf` gives the errors a judgement stands for, one per violation, in its order.
 */
export class ReflectionQualityError extends Error {
  override readonly name: string = "ReflectionQualityError";
}
/** The analysis lacks depth: no root cause. */
export class InsufficientDepthError extends ReflectionQualityError {
  override readonly name = "InsufficientDepthError";
}
/** The strategy adjustments are vague, not executable. */
export class NotActionableError extends ReflectionQualityError {
  override readonly name = "NotActionableError";
}
/** A proposed pattern lacks the tenant's evidence (a hypothesis not yet confirmed). */
export class InvalidPatternError extends ReflectionQualityError {
  override readonly name = "InvalidPatternError";
}
/** A required part is missing. */
export class IncompleteReflectionError extends ReflectionQualityError {
  override readonly name = "IncompleteReflectionError";
}

const classes: { test: (violation: string) => boolean; make: (message: string) => ReflectionQualityError }[] =
  [
    { test: (v) => v.startsWith("Incomplete reflection"), make: (m) => new IncompleteReflectionError(m) },
    { test: (v) => v.startsWith("Shallow reflection"), make: (m) => new InsufficientDepthError(m) },
    { test: (v) => v.startsWith("Not actionable"), make: (m) => new NotActionableError(m) },
    { test: isPatternViolation, make: (m) => new InvalidPatternError(m) },
  ];

/**
 * One error per violation of a judgement: the class of its rule, or the base class for the rules
 * Reflector adds (relevance, novelty, the lesson screen). Empty for a reflection with none.
 */
export function qualityErrorsOf(validation: Pick<ValidationResult, "violations">): ReflectionQualityError[] {
  return validation.violations.map(
    (violation) =>
      classes.find(({ test }) => test(violation))?.make(violation) ?? new ReflectionQualityError(violation),
  );
}
