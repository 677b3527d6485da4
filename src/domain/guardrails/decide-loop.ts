import type { Decision, TaskCompleted } from "../contracts/index.js";
import type { GuardrailConfig } from "./guardrail-config.js";
import { loopFamilyRoot, rerunDepthFromId } from "./loop-family.js";
import { answerRetryBelow } from "../evaluation/answer-evaluation.js";

/** The stored trace of an earlier loop of the same family, as far as the decision needs it. */
export interface PreviousLoop {
  rootLoopId: string;
  rerunDepth: number;
  maxReruns: number;
  alignment: number | null;
  drift: number | null;
  fatigue: number;
}

export interface LoopOverride {
  overrideFatigue: boolean;
  overrideMaxReruns: boolean;
  overriddenBy: string | null;
}

export interface LoopDecisionInput {
  event: Pick<TaskCompleted, "loopId" | "rerunOf" | "outcome" | "scores" | "biasTags">;
  previous: PreviousLoop | null;
  override: LoopOverride | null;
  /** Occurrences of each bias tag for the tenant before this event. */
  biasHistory: ReadonlyMap<string, number>;
  /** The answer's self-evaluation asked for a retry. */
  answerNeedsRetry: boolean;
  /**
   * Reruns already recorded in this loop's family, this loop excluded. Counts sibling reruns too,
   * so a family that branches cannot slip past the limit; a linear chain has as many as its depth
   * says.
   */
  familyReruns?: number;
}

export interface LoopDecisionResult {
  decision: Decision;
  rootLoopId: string;
  rerunDepth: number;
  newLoopId: string | null;
  rerunCount: number;
  maxReruns: number;
  reason: string;
  reasonDetail: string;
  triggers: string[];
  fatigue: number;
  fatigueIncreased: boolean;
  biasEcho: boolean;
  repeatedTags: string[];
  /** Occurrences of each of this event's bias tags, this event included. */
  biasCounts: Map<string, number>;
  forceFinalize: boolean;
  overriddenBy: string | null;
  alignment: number | null;
  drift: number | null;
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/**
 * Score gains are differences of two-decimal scores: 0.75 − 0.70 is 0.04999999999999993 in
 * binary floating point. Rounding first lets a gain of exactly the threshold count as one (≥).
 */
function gain(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

interface Scores {
  alignment: number | null;
  drift: number | null;
}

/**
 * Fatigue after this loop: it grows when a rerun improved neither alignment nor drift by the
 * threshold, and decays when one did. A first loop keeps the family's (none: 0).
 */
function fatigueAfter(
  previous: PreviousLoop | null,
  { alignment, drift }: Scores,
  config: GuardrailConfig,
): { fatigue: number; fatigueIncreased: boolean } {
  if (!previous) return { fatigue: 0, fatigueIncreased: false };
  // A missing score counts as the worst: alignment 0.0, drift 1.0.
  const alignmentGain = gain((alignment ?? 0) - (previous.alignment ?? 0));
  const driftGain = gain((previous.drift ?? 1) - (drift ?? 1));
  const improved =
    alignmentGain >= config.fatigueImprovementThreshold || driftGain >= config.fatigueImprovementThreshold;
  const fatigue = previous.fatigue + (improved ? -config.fatigueDecay : config.fatigueIncrement);
  return { fatigue: round(Math.min(config.maxFatigue, Math.max(0, fatigue))), fatigueIncreased: !improved };
}

/**
 * The event's tags are recorded in the tenant's history first, then the counts checked. A tag
 * listed twice in one event is one flag: the store increments it once per event too.
 */
function repeatedBiasTags(
  event: LoopDecisionInput["event"],
  biasHistory: ReadonlyMap<string, number>,
  config: GuardrailConfig,
): { biasCounts: Map<string, number>; repeatedTags: string[] } {
  const biasCounts = new Map<string, number>();
  for (const { tag } of event.biasTags ?? []) {
    if (!biasCounts.has(tag)) biasCounts.set(tag, (biasHistory.get(tag) ?? 0) + 1);
  }
  const repeatedTags = [...biasCounts]
    .filter(([, count]) => count >= config.biasRepetitionThreshold)
    .map(([tag]) => tag)
    .sort();
  return { biasCounts, repeatedTags };
}

/** What asks for a rerun (alignment, drift, a failed outcome without scores, the answer's self-evaluation), with why. */
function rerunTriggers(
  input: LoopDecisionInput,
  { alignment, drift }: Scores,
  config: GuardrailConfig,
): { triggers: string[]; reasons: string[] } {
  const triggers: string[] = [];
  const reasons: string[] = [];
  if (alignment !== null && alignment < config.alignmentThreshold) {
    triggers.push("alignment");
    reasons.push(`alignment ${alignment} < ${config.alignmentThreshold}`);
  }
  if (drift !== null && drift > config.driftThreshold) {
    triggers.push("drift");
    reasons.push(`drift ${drift} > ${config.driftThreshold}`);
  }
  if (alignment === null && drift === null && input.event.outcome !== "success") {
    triggers.push("outcome");
    reasons.push(`outcome was ${input.event.outcome} and no alignment/drift scores were given`);
  }
  if (input.answerNeedsRetry) {
    triggers.push("self_evaluation");
    reasons.push(`the answer's self-evaluation scored below ${String(answerRetryBelow)}`);
  }
  return { triggers, reasons };
}

/**
 * The loop guardrails (docs/specification.md#loop-guardrails) as one pure decision: bias echo
 * halts; a loop that meets its thresholds finalizes; otherwise it reruns unless the rerun limit or
 * reflection fatigue forces finalization (each can be overridden).
 */
export function decideLoop(input: LoopDecisionInput, config: GuardrailConfig): LoopDecisionResult {
  const { event, previous, override } = input;
  const alignment = event.scores?.alignment ?? null;
  const drift = event.scores?.drift ?? null;

  const chain = previous
    ? { root: previous.rootLoopId, depth: previous.rerunDepth + 1 }
    : { root: loopFamilyRoot(event), depth: rerunDepthFromId(event) };
  const isRerun = event.rerunOf !== undefined;
  // Reruns used so far by the family, this loop included when it is one.
  const used = Math.max(chain.depth, (input.familyReruns ?? 0) + (isRerun ? 1 : 0));
  const lineage = { root: chain.root, depth: chain.depth, used };
  const maxReruns = previous?.maxReruns ?? config.maxReruns;

  const { fatigue, fatigueIncreased } = fatigueAfter(previous, { alignment, drift }, config);
  const { biasCounts, repeatedTags } = repeatedBiasTags(event, input.biasHistory, config);
  const { triggers, reasons } = rerunTriggers(input, { alignment, drift }, config);

  const base = {
    rootLoopId: lineage.root,
    rerunDepth: lineage.depth,
    maxReruns,
    triggers,
    fatigue,
    fatigueIncreased,
    biasEcho: repeatedTags.length > 0,
    repeatedTags,
    biasCounts,
    alignment,
    drift,
  };
  const finalize = (
    reason: string,
    reasonDetail: string,
    forceFinalize: boolean,
    overriddenBy: string | null,
  ) => ({
    ...base,
    decision: "finalize" as const,
    newLoopId: null,
    rerunCount: lineage.used,
    reason,
    reasonDetail,
    forceFinalize,
    overriddenBy,
  });

  if (repeatedTags.length > 0) {
    return {
      ...base,
      decision: "halt",
      newLoopId: null,
      rerunCount: lineage.used,
      reason: "bias_echo_detected",
      reasonDetail: `bias tags raised ${config.biasRepetitionThreshold}+ times: ${repeatedTags.join(", ")}`,
      triggers: [...triggers, "pessimist"],
      forceFinalize: false,
      overriddenBy: null,
    };
  }
  if (triggers.length === 0) {
    const detail =
      alignment !== null || drift !== null
        ? `alignment ${alignment ?? "n/a"} and drift ${drift ?? "n/a"} are within thresholds`
        : "task succeeded";
    return finalize("thresholds_met", detail, false, null);
  }

  let overriddenBy: string | null = null;
  const overrideDetail: string[] = [];
  if (lineage.used >= maxReruns) {
    if (!override?.overrideMaxReruns) {
      return finalize(
        "max_reruns_reached",
        `${lineage.used} of ${maxReruns} reruns used; wanted a rerun because ${reasons.join("; ")}`,
        true,
        null,
      );
    }
    overriddenBy = override.overriddenBy ?? "unknown";
    overrideDetail.push(`rerun limit ${maxReruns} overridden by ${overriddenBy}`);
  }
  if (fatigue >= config.fatigueCriticalThreshold) {
    if (!override?.overrideFatigue) {
      return finalize(
        "reflection_fatigue",
        `fatigue ${fatigue} >= ${config.fatigueCriticalThreshold}; reruns stopped improving alignment or drift`,
        true,
        null,
      );
    }
    overriddenBy = override.overriddenBy ?? "unknown";
    overrideDetail.push(
      `fatigue ${fatigue} >= ${config.fatigueCriticalThreshold} overridden by ${overriddenBy}`,
    );
  }

  const reason = triggers.includes("alignment")
    ? "alignment_threshold_not_met"
    : triggers.includes("drift")
      ? "drift_threshold_exceeded"
      : triggers.includes("outcome")
        ? "task_failed"
        : "answer_quality_low";
  return {
    ...base,
    decision: "rerun",
    newLoopId: `${lineage.root}_r${lineage.used + 1}`,
    rerunCount: lineage.used + 1,
    reason,
    reasonDetail: [...reasons, ...overrideDetail].join("; "),
    forceFinalize: false,
    overriddenBy,
  };
}
