import type { Reflection, Verdict } from "../domain/contracts/index.js";
import type { ValidationResult } from "../domain/quality/validate-reflection.js";

/** Which event a reflection's lifecycle is about. */
export interface LifecycleSubject {
  tenantId: string;
  projectId: string;
  eventId: string;
  loopId: string;
}

/**
 * The named lifecycle of a generated reflection, for the logs (src/observability/reflection-log.ts):
 * generation started, each attempt of the improvement loop judged, the loop's end, the verdict,
 * a failed generation, the lesson stored.
 */
export interface ReflectionLifecycle {
  generationStarted(subject: LifecycleSubject, facts: { outcome: string; eventCount: number }): void;
  attemptJudged(
    subject: LifecycleSubject,
    attempt: { attempt: number; maxAttempts: number; validation: ValidationResult },
  ): void;
  generated(
    subject: LifecycleSubject,
    result: {
      reflection: Reflection;
      attempts: number;
      maxAttempts: number;
      validation: ValidationResult;
      verdict: Verdict;
      succeeded: boolean;
      generator: string;
    },
  ): void;
  generationFailed(subject: LifecycleSubject, error: unknown): void;
  stored(subject: LifecycleSubject, lesson: { reflectionId: string; importance: number }): void;
}
