/** A loop's recorded decision as the read side shows it (`loop_traces`). */
export interface LoopStatus {
  loopId: string;
  rootLoopId: string;
  rerunCount: number;
  maxReruns: number;
  decision: string;
  newLoopId: string | null;
  biasEcho: boolean;
  repeatedTags: string[];
  reflectionFatigue: number;
  fatigueIncreased: boolean;
  forceFinalize: boolean;
  rerunReason: string;
  rerunReasonDetail: string;
  rerunTrigger: string[];
  overriddenBy: string | null;
  alignment: number | null;
  drift: number | null;
  outcome: string;
  orchestratorPersona: string | null;
  reflectionPersona: string | null;
  decidedAt: string;
}

/** An operator's override of the guardrails for the next decision about a loop. */
export interface OverrideInput {
  overrideFatigue: boolean;
  overrideMaxReruns: boolean;
  overriddenBy: string | null;
  overrideReason: string | null;
}

export interface StoredOverride extends OverrideInput {
  loopId: string;
  updatedAt: string;
}
