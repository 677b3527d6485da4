import { attributionConfidence } from "./attribution-confidence.js";
import { locatedAt, type AttributionBasis, type LocatedFailure } from "./located-failure.js";
import {
  evidenceMaxChars,
  failureCues,
  fingerprint,
  firstCue,
  isSubstantive,
  quoteAround,
  squeeze,
  type Cue,
} from "./trace-scan.js";
import { lastAgentStepBefore, roleOf, type TraceView } from "./trace-view.js";

/**
 * The rules that read what the agents wrote: text that reports a failure, and a step repeated word
 * for word. Each is one pass over the searchable steps. Cues of a shortcut or of giving up, and
 * the last agent step as a guess, were removed: on sources they were not fitted to they named the
 * annotated step less often than a rule that ignores the trace (bench/generalisation.ts).
 */

export interface CueScope {
  /** Only steps before this index (default: all). */
  before?: number | undefined;
  /** Only steps from this index on (default: 0). */
  from?: number;
  /**
   * Whether a cue in an orchestrator's step is a report of what another agent did, attributed to
   * the last agent step before it (default: true). A shortcut is the speaker's own decision.
   */
  reported?: boolean;
}

/** The first searchable step in `scope` whose text holds one of `cues`. */
export function byCue(
  view: TraceView,
  cues: readonly Cue[],
  basis: AttributionBasis,
  confidence: number,
  { before = view.steps.length, from = 0, reported = true }: CueScope = {},
): LocatedFailure | null {
  const { steps } = view;
  for (const i of view.searchable) {
    if (i >= before) break;
    if (i < from) continue;
    const found = firstCue(view.lower(i), cues);
    if (!found) continue;
    const step = steps[i];
    const quote = quoteAround(step?.content ?? "", found.at);
    const agent = reported && roleOf(step?.actor) === "orchestrator" ? lastAgentStepBefore(steps, i) : -1;
    if (agent >= 0) {
      return locatedAt(
        steps,
        basis,
        agent,
        confidence - attributionConfidence.reportedByOrchestrator,
        `${step?.actor ?? "the orchestrator"} reported at step ${String(i)}: ${quote}`,
      );
    }
    return locatedAt(steps, basis, i, confidence, quote);
  }
  return null;
}

/** Text that reports a failure ("error", "exception", "Traceback", "failed"). */
export function failureText(view: TraceView): LocatedFailure | null {
  return byCue(view, failureCues, "failure_text", attributionConfidence.failureText);
}

/** The first step the same agent then repeated word for word (it was stuck from there on). */
export function repetition(view: TraceView): LocatedFailure | null {
  const { steps } = view;
  const seen = new Map<string, number[]>();
  for (const i of view.searchable) {
    const s = steps[i];
    if (!s || !isSubstantive(s)) continue;
    const key = `${s.actor ?? ""}\u0000${String(s.content.length)}:${String(fingerprint(s.content))}`;
    const earlier = seen.get(key);
    const origin = earlier?.find((j) => steps[j]?.content === s.content);
    if (origin !== undefined) {
      return locatedAt(
        steps,
        "repetition",
        origin,
        attributionConfidence.repetition,
        `repeated word for word at step ${String(i)}: ${squeeze(s.content, evidenceMaxChars - 40)}`,
      );
    }
    if (earlier) earlier.push(i);
    else seen.set(key, [i]);
  }
  return null;
}
