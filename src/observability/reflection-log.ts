import type { Logger } from "./logger.js";
import type { LifecycleSubject, ReflectionLifecycle } from "../pipeline/ports.js";

/**
 * The kind of a violation, without its numbers, quotes or the trace's words it cites
 * ("Shallow reflection", "Nothing new", "Unproven pattern"): a log line says what failed, never
 * what an agent's trace or a model wrote (the outcome on Kafka carries the full texts).
 */
export function violationKind(violation: string): string {
  const head = violation.split(/[:.]/)[0] ?? violation;
  return head
    .replace(/'[^']*'|"[^"]*"/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

const kinds = (violations: readonly string[]) => [...new Set(violations.map(violationKind))];
const two = (value: number) => value.toFixed(2);

/**
 * The reflection lifecycle's log events (docs/operations.md#reflection-lifecycle-logs), each line
 * with its name in `event` and the event's tenant, project, event and loop ids:
 * `reflection_generation_started`, `reflection_attempt_judged` (the improvement loop's "Quality
 * reflection generated (attempt n)" or "Attempt n failed validation"), `reflection_generated` (and
 * the loop's "Failed to generate quality reflection … Returning best effort." when it did not
 * succeed), `reflection_verdict` (the quality enforcer's "Reflection accepted", "accepted WITH
 * WARNINGS", "REJECTED"), `reflection_generation_failed`, `reflection_stored`.
 */
export function createReflectionLog(logger: Pick<Logger, "info" | "warn" | "error">): ReflectionLifecycle {
  const ids = (s: LifecycleSubject) => ({
    tenantId: s.tenantId,
    projectId: s.projectId,
    eventId: s.eventId,
    loopId: s.loopId,
  });
  return {
    generationStarted(subject, facts) {
      logger.info(
        {
          event: "reflection_generation_started",
          ...ids(subject),
          outcome: facts.outcome,
          eventCount: facts.eventCount,
        },
        "reflection_generation_started",
      );
    },

    attemptJudged(subject, { attempt, maxAttempts, validation }) {
      const fields = {
        event: "reflection_attempt_judged",
        ...ids(subject),
        attempt,
        maxAttempts,
        qualityScore: validation.qualityScore,
        valid: validation.isValid,
        violations: kinds(validation.violations),
      };
      if (validation.isValid) {
        logger.info(
          fields,
          `Quality reflection generated (attempt ${String(attempt)}): score=${two(validation.qualityScore)}`,
        );
      } else {
        logger.warn(
          fields,
          `Attempt ${String(attempt)} failed validation: score=${two(validation.qualityScore)}. Violations: ${fields.violations.join(", ")}`,
        );
      }
    },

    generated(subject, result) {
      const { reflection, validation } = result;
      logger.info(
        {
          event: "reflection_generated",
          ...ids(subject),
          generator: result.generator,
          importance: reflection.importance,
          confidence: reflection.confidence,
          hasStrategy: reflection.strategyText !== null && reflection.strategyText.trim() !== "",
          attempts: result.attempts,
          qualityScore: validation.qualityScore,
          improvementLoop: result.succeeded ? "success" : "failure",
        },
        "reflection_generated",
      );
      if (!result.succeeded) {
        const exhausted = result.attempts >= result.maxAttempts;
        logger.warn(
          {
            event: "reflection_improvement_failed",
            ...ids(subject),
            attempts: result.attempts,
            maxAttempts: result.maxAttempts,
            qualityScore: validation.qualityScore,
            violations: kinds(validation.violations),
            stoppedBecause: exhausted ? "attempts_used_up" : "not_retryable",
          },
          exhausted
            ? `Failed to generate quality reflection after ${String(result.attempts)} attempts. Returning best effort.`
            : `Failed to generate quality reflection after ${String(result.attempts)} of ${String(result.maxAttempts)} attempts (a rewrite is not asked for: the reflection is kept as it is, or quarantined). Returning best effort.`,
        );
      }
      const verdict = {
        event: "reflection_verdict",
        ...ids(subject),
        verdict: result.verdict,
        qualityScore: validation.qualityScore,
        violations: kinds(validation.violations),
      };
      const score = two(validation.qualityScore);
      if (result.verdict === "accepted") logger.info(verdict, `Reflection accepted: quality_score=${score}`);
      else if (result.verdict === "rejected") {
        logger.warn(
          verdict,
          `Reflection REJECTED: quality_score=${score}. Violations: ${verdict.violations.join(", ")}`,
        );
      } else {
        logger.warn(
          verdict,
          `Reflection accepted WITH WARNINGS: quality_score=${score}. Issues: ${verdict.violations.join(", ")}`,
        );
      }
    },

    generationFailed(subject, error) {
      logger.error(
        {
          event: "reflection_generation_failed",
          ...ids(subject),
          err:
            error instanceof Error
              ? { type: error.name, message: error.message }
              : { message: String(error) },
        },
        "reflection_generation_failed",
      );
    },

    stored(subject, lesson) {
      logger.info(
        {
          event: "reflection_stored",
          ...ids(subject),
          reflectionId: lesson.reflectionId,
          importance: lesson.importance,
        },
        "reflection_stored",
      );
    },
  };
}
