import { Counter, Gauge, type Registry } from "prom-client";
import type { EffectivenessVerdict } from "../domain/feedback/lesson-effectiveness.js";

const verdicts: EffectivenessVerdict[] = ["effective", "ineffective", "insufficient_data"];

export interface EffectivenessSource {
  effectivenessSummary(
    tenantId?: string,
  ): Promise<Record<EffectivenessVerdict, { lessons: number; recurrences: number }>>;
}

/**
 * Feedback counters and lesson-effectiveness gauges. Labels stay bounded (rating, result, verdict):
 * per-signature or per-tenant numbers belong in the API, not in Prometheus.
 */
export function createFeedbackMetrics(
  registry: Registry,
  options: { source: EffectivenessSource; refreshMs: number; onError(err: unknown): void },
) {
  const feedback = new Counter({
    name: "reflector_feedback_total",
    help: "User feedback on lessons by rating (up, down) and result (recorded, duplicate).",
    labelNames: ["rating", "result"] as const,
    registers: [registry],
  });

  let refreshedAt = 0;
  let refreshing: Promise<void> | null = null;
  // Both gauges collect through the same refresh: a scrape reads them concurrently.
  const collect = () => refresh();
  const lessons = new Gauge({
    name: "reflector_lessons",
    help: "Stored lessons by effectiveness verdict (docs/api.md#lesson-effectiveness).",
    labelNames: ["verdict"] as const,
    registers: [registry],
    collect,
  });
  const recurrences = new Gauge({
    name: "reflector_lesson_recurrences",
    help: "Recurrences of stored lessons' signatures after the lesson was published, by verdict.",
    labelNames: ["verdict"] as const,
    registers: [registry],
    collect,
  });

  // Refreshed on scrape with one aggregate query, at most every `refreshMs`; a failed query keeps
  // the last values rather than failing the whole scrape.
  async function refresh(): Promise<void> {
    if (Date.now() - refreshedAt < options.refreshMs) return;
    refreshing ??= options.source
      .effectivenessSummary()
      .then((summary) => {
        for (const verdict of verdicts) {
          lessons.set({ verdict }, summary[verdict].lessons);
          recurrences.set({ verdict }, summary[verdict].recurrences);
        }
        refreshedAt = Date.now();
      })
      .catch((err: unknown) => {
        options.onError(err);
      })
      .finally(() => {
        refreshing = null;
      });
    await refreshing;
  }

  return {
    recorded: (rating: "up" | "down", result: "recorded" | "duplicate"): void => {
      feedback.inc({ rating, result });
    },
  };
}
