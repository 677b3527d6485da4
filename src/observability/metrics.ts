import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { OutboundMessage } from "../pipeline/ports.js";
import type { StageTimer } from "../pipeline/stage-timer.js";

/** Every metric Reflector exports, on one registry (no global state, so tests stay isolated). */
export function createMetrics() {
  const registry = new Registry();
  // Standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, …), as stock Node.js
  // dashboards and alerts expect them.
  collectDefaultMetrics({ register: registry });

  const stageDuration = new Histogram({
    name: "reflector_stage_duration_seconds",
    help: "Time spent in each pipeline stage.",
    labelNames: ["stage"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const events = new Counter({
    name: "reflector_events_total",
    help: "Consumed task-completed events by how they ended.",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const deadLetters = new Counter({
    name: "reflector_dead_letters_total",
    help: "Events sent to the dead-letter topic, by error code.",
    labelNames: ["code"] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: "reflector_retries_total",
    help: "In-process retries of a failed event, by error code.",
    labelNames: ["code"] as const,
    registers: [registry],
  });
  const verdicts = new Counter({
    name: "reflector_reflections_total",
    help: "Reflection outcomes by verdict and generator.",
    labelNames: ["verdict", "generator"] as const,
    registers: [registry],
  });
  const decisions = new Counter({
    name: "reflector_loop_decisions_total",
    help: "Loop decisions by decision and reason.",
    labelNames: ["decision", "reason"] as const,
    registers: [registry],
  });
  const generatorCalls = new Counter({
    name: "reflector_generator_calls_total",
    help: "Calls to the reflection generator (LLM calls for the openai generator).",
    labelNames: ["generator"] as const,
    registers: [registry],
  });
  const qualityScore = new Histogram({
    name: "reflector_reflection_quality_score",
    help: "Quality score of judged reflections.",
    buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: "reflector_in_flight_events",
    help: "Events being processed right now.",
    registers: [registry],
  });
  const ready = new Gauge({
    name: "reflector_ready",
    help: "1 when the processor is in its consumer group and its dependencies answer.",
    registers: [registry],
  });

  const timer: StageTimer = {
    async time(stage, work) {
      const end = stageDuration.startTimer({ stage });
      try {
        return await work();
      } finally {
        end();
      }
    },
  };

  return {
    registry,
    timer,
    events,
    deadLetters,
    retries,
    verdicts,
    decisions,
    generatorCalls,
    qualityScore,
    inFlight,
    ready,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const label = (value: unknown): string => (typeof value === "string" && value ? value : "unknown");

/**
 * Counts what one event published once its transaction has committed: verdicts by generator,
 * loop decisions by reason, and generator calls (attempts of the improvement loop; none for a
 * reused lesson). Labels come from closed sets (verdicts, decisions, reason codes, generators).
 */
export function countCommittedOutputs(
  metrics: Pick<Metrics, "verdicts" | "decisions" | "generatorCalls">,
  outputs: readonly OutboundMessage[],
  generatorCalls: number,
): void {
  for (const output of outputs) {
    if (output.role === "loopDecision") {
      metrics.decisions.inc({ decision: label(output.value.decision), reason: label(output.value.reason) });
      continue;
    }
    const generator = label(output.value.generator);
    metrics.verdicts.inc({ verdict: label(output.value.verdict), generator });
    if (generatorCalls > 0 && generator !== "reused")
      metrics.generatorCalls.inc({ generator }, generatorCalls);
  }
}
