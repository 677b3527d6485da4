import { Counter, Histogram, type Registry } from "prom-client";
import type { QualityObserver } from "../pipeline/ports.js";

const unitBuckets = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];

/**
 * The quality metrics (docs/specification.md#quality-metrics), Prometheus style. Averages and
 * percentiles come from the histograms (`_sum / _count`, `histogram_quantile`); counts from the
 * counters:
 *   quality_score_avg/p50/p95  → reflector_reflection_quality_score (registered in metrics.ts)
 *   depth/actionability/completeness avg → reflector_reflection_{depth_score,actionability_score,completeness}
 *   rejected / accepted_with_warnings count → reflector_reflections_total{verdict}
 *   pattern invalid count / validity avg → reflector_patterns_invalid_total, reflector_reflection_pattern_validity
 *   improvement loop iterations avg / success rate → reflector_improvement_loop_iterations,
 *     reflector_improvement_loop_runs_total{result}: success when the loop reached a reflection
 *     that meets the thresholds it works towards (improvementLoopSucceeded), not merely one that
 *     was not rejected; the rejection rate is its `verdict` label
 */
export function createQualityMetrics(registry: Registry, qualityScore: Histogram): QualityObserver {
  const histogram = (name: string, help: string, buckets = unitBuckets) =>
    new Histogram({ name, help, buckets, registers: [registry] });
  const depth = histogram("reflector_reflection_depth_score", "Depth score of judged reflections.");
  const actionability = histogram(
    "reflector_reflection_actionability_score",
    "Actionability score of judged reflections.",
  );
  const completeness = histogram("reflector_reflection_completeness", "Completeness of judged reflections.");
  const patternValidity = histogram(
    "reflector_reflection_pattern_validity",
    "Mean pattern validity of judged reflections that name patterns.",
  );
  const iterations = histogram(
    "reflector_improvement_loop_iterations",
    "Attempts the improvement loop needed per reflection.",
    [1, 2, 3, 4, 5, 10],
  );
  const invalidPatterns = new Counter({
    name: "reflector_patterns_invalid_total",
    help: "Patterns named by a final reflection that lacked statistical support.",
    registers: [registry],
  });
  const loopRuns = new Counter({
    name: "reflector_improvement_loop_runs_total",
    help: "Improvement loops by result (success: the final reflection meets the completeness, depth, actionability and relevance thresholds and is not quarantined) and by the final reflection's verdict.",
    labelNames: ["result", "verdict"] as const,
    registers: [registry],
  });
  for (const result of ["success", "failure"])
    for (const verdict of ["accepted", "accepted_with_warnings", "rejected"])
      loopRuns.inc({ result, verdict }, 0);

  return {
    observe({ validation, verdict, attempts, succeeded }) {
      const m = validation.metrics;
      qualityScore.observe(validation.qualityScore);
      depth.observe(m.depthScore);
      actionability.observe(m.actionabilityScore);
      completeness.observe(m.completeness);
      if (m.patternValidity !== null) patternValidity.observe(m.patternValidity);
      invalidPatterns.inc(validation.invalidPatterns.length);
      iterations.observe(attempts);
      loopRuns.inc({ result: succeeded ? "success" : "failure", verdict });
    },
  };
}
