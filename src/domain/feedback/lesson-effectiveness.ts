/**
 * Did a lesson work? A lesson is published when its reflection is first stored (the signature's
 * first occurrence). Every later occurrence of the same signature is a recurrence after
 * publication: the agents had the lesson and the error happened again.
 */

export type EffectivenessVerdict = "effective" | "ineffective" | "insufficient_data";

export interface EffectivenessThresholds {
  /** A lesson younger than this cannot be called effective yet: quiet for a day proves little. */
  minObservationDays: number;
  /** Recurrences needed before a lesson can be called ineffective (one or two may be stragglers). */
  minRecurrencesForIneffective: number;
  /** At or above this many recurrences per week the lesson is not stopping the error. */
  ineffectiveRecurrencesPerWeek: number;
}

export const defaultEffectivenessThresholds: EffectivenessThresholds = {
  minObservationDays: 7,
  minRecurrencesForIneffective: 3,
  ineffectiveRecurrencesPerWeek: 1,
};

export interface LessonEffectiveness {
  recurrencesAfterPublication: number;
  daysSincePublication: number;
  /**
   * Recurrences per 7 days, over at least one week: a burst in the first hour is not
   * extrapolated to hundreds per week.
   */
  recurrencesPerWeek: number;
  verdict: EffectivenessVerdict;
}

const dayMs = 86_400_000;

export function lessonEffectiveness(
  input: { occurrences: number; publishedAt: Date; now: Date },
  thresholds: EffectivenessThresholds = defaultEffectivenessThresholds,
): LessonEffectiveness {
  const recurrences = Math.max(0, input.occurrences - 1);
  const days = Math.max(0, (input.now.getTime() - input.publishedAt.getTime()) / dayMs);
  const perWeek = (recurrences / Math.max(days, 7)) * 7;
  let verdict: EffectivenessVerdict = "insufficient_data";
  if (
    recurrences >= thresholds.minRecurrencesForIneffective &&
    perWeek >= thresholds.ineffectiveRecurrencesPerWeek
  ) {
    verdict = "ineffective";
  } else if (days >= thresholds.minObservationDays && perWeek < thresholds.ineffectiveRecurrencesPerWeek) {
    verdict = "effective";
  }
  return {
    recurrencesAfterPublication: recurrences,
    daysSincePublication: Math.round(days * 1000) / 1000,
    recurrencesPerWeek: Math.round(perWeek * 1000) / 1000,
    verdict,
  };
}

/** How many stored lessons were published at one moment with one occurrence count. */
export interface LessonCount {
  occurrences: number;
  publishedAt: Date;
  lessons: number;
}

export type EffectivenessSummary = Record<EffectivenessVerdict, { lessons: number; recurrences: number }>;

/** Lessons and their recurrences by verdict, each lesson judged by `lessonEffectiveness`. */
export function summarizeEffectiveness(
  counts: readonly LessonCount[],
  now: Date,
  thresholds: EffectivenessThresholds = defaultEffectivenessThresholds,
): EffectivenessSummary {
  const summary: EffectivenessSummary = {
    effective: { lessons: 0, recurrences: 0 },
    ineffective: { lessons: 0, recurrences: 0 },
    insufficient_data: { lessons: 0, recurrences: 0 },
  };
  for (const count of counts) {
    const e = lessonEffectiveness(
      { occurrences: count.occurrences, publishedAt: count.publishedAt, now },
      thresholds,
    );
    summary[e.verdict].lessons += count.lessons;
    summary[e.verdict].recurrences += e.recurrencesAfterPublication * count.lessons;
  }
  return summary;
}
