import type { AttributionBasis } from "./located-failure.js";
import type { AgentBaseline, StepBaseline } from "./trace-baselines.js";

/** How often one kind of evidence was right, measured on annotated failed runs. */
export interface Reliability {
  /** Runs it decided. */
  n: number;
  /** Share where its step was the annotated one. */
  exact: number;
  /** Share where its step was within one event of it. */
  near: number;
  /** Share where the agent responsible for its step was the annotated agent. */
  agent: number;
  /** On the same runs, the fallback's step within one event and its agent (see below). */
  fallbackNear?: number;
  fallbackAgent?: number;
}

/**
 * What the general attribution trusts. A kind of evidence decides the step only when, on the runs
 * where it fired, its step was within one event of the annotated one more often than the
 * fallback's on those same runs, and decides the agent only when its agent was right more often
 * than the fallback agent there; otherwise the fallback — a rule that ignores the trace's content
 * — answers, and says so. Kinds measured on fewer than `minRuns` runs are not trusted at all.
 */
export interface AttributionCalibration {
  byBasis: Partial<Record<AttributionBasis, Reliability>>;
  fallback: { step: StepBaseline; agent: AgentBaseline; reliability: Reliability };
  minRuns: number;
  /**
   * Each kind's precision on sources nothing was tuned on. Only this may set the rules above a
   * model: their guess is shown to a model, or replaces its answer, only where it held there.
   */
  heldOut: Partial<Record<AttributionBasis, Reliability>>;
}

/**
 * Measured on the tuned public sources only (the Who&When hand-crafted and algorithm-generated
 * sets and τ-bench's gpt-4o airline runs: 269 labelled failed runs), by
 * `npm run bench -- generalisation` (its "calibration chosen on the tuned sources" lines print
 * this table); reported on the held-out sources there. The fallback is the step rule and the agent
 * rule with the best mean over those sources.
 */
export const defaultCalibration: AttributionCalibration = {
  byBasis: {
    first_state_change: { n: 85, exact: 0.86, near: 0.86, agent: 1, fallbackNear: 0.34, fallbackAgent: 1 },
    failure_text: { n: 114, exact: 0.17, near: 0.43, agent: 0.53, fallbackNear: 0.41, fallbackAgent: 0.61 },
    repetition: { n: 27, exact: 0, near: 0.15, agent: 0.33, fallbackNear: 0.11, fallbackAgent: 0.44 },
  },
  fallback: {
    step: "first_error_event",
    agent: "most_common_worker",
    reliability: { n: 300, exact: 0.06, near: 0.28, agent: 0.72 },
  },
  minRuns: 10,
  // Five held-out sources (264 labelled failed runs: AgentRx retail, AgentErrorBench GAIA,
  // AgentProcessBench HotpotQA, two AFTraj samples), pooled, as
  // `npm run bench -- generalisation` prints them under "reliability on the held-out sources".
  heldOut: {
    first_state_change: { n: 25, exact: 0.24, near: 0.28, agent: 0.76 },
    failure_text: { n: 116, exact: 0, near: 0.11, agent: 0.66 },
    repetition: { n: 13, exact: 0, near: 0.14, agent: 0.77 },
  },
};

/**
 * How often a kind of evidence named the annotated step on sources nothing was tuned on: 0 for a
 * kind measured there on fewer than `minRuns` runs (unproven is not precise).
 */
export function heldOutPrecision(
  basis: AttributionBasis,
  calibration: AttributionCalibration = defaultCalibration,
): number {
  const measured = calibration.heldOut[basis];
  return measured !== undefined && measured.n >= calibration.minRuns ? measured.exact : 0;
}
