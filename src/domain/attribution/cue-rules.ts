import { attributionConfidence } from "./attribution-confidence.js";
import { locatedAt, type AttributionBasis, type LocatedFailure } from "./located-failure.js";
import {
  evidenceMaxChars,
  failureCues,
  fingerprint,
  firstCue,
  isSubstantive,
  quoteAround,
  reasoningCues,
  shortcutCues,
  squeeze,
  type Cue,
} from "./trace-scan.js";
import { callBefore, lastAgentStepBefore, roleOf, type TraceView } from "./trace-view.js";

/**
 * The rules that read what the agents wrote (rules 5–7, 9 and 10 of attribute-failure.ts): cues
 * of a shortcut, of giving up or of a failure, a step repeated word for word, and the last
 * agent step as a guess. Each is one pass over the searchable steps.
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

/** Rule 5: the first step, from `from` to the final answer, where an agent took a shortcut on purpose. */
export function shortcutFrom(view: TraceView, from = 0): LocatedFailure | null {
  return byCue(view, shortcutCues, "shortcut", attributionConfidence.shortcut, {
    before: view.last,
    reported: false,
    from,
  });
}

/** Rule 6: giving up, or an empty tool response, whichever comes first. */
export function givingUp(view: TraceView): LocatedFailure | null {
  const { steps } = view;
  const emptyIndex = view.searchable.find((i) => {
    const s = steps[i];
    return s?.type === "tool_response" && s.content.trim() === "";
  });
  const reasoning = byCue(view, reasoningCues, "reasoning_cue", attributionConfidence.reasoningCue, {
    before: emptyIndex,
  });
  if (reasoning) return reasoning;
  if (emptyIndex === undefined) return null;
  return locatedAt(
    steps,
    "empty_response",
    emptyIndex,
    attributionConfidence.emptyResponse,
    "the tool response was empty",
    callBefore(steps, emptyIndex),
  );
}

/** Rule 7: text that reports a failure. */
export function failureText(view: TraceView): LocatedFailure | null {
  return byCue(view, failureCues, "failure_text", attributionConfidence.failureText);
}

/** Rule 9: the first step the same agent then repeated word for word (it was stuck from there on). */
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

/** Rule 10: a guess, the last substantive agent step before the final answer (else the final step). */
export function lastStepGuess(view: TraceView): LocatedFailure {
  const { steps, last } = view;
  const fallback = lastAgentStepBefore(steps, last);
  if (fallback >= 0) {
    const s = steps[fallback];
    return locatedAt(
      steps,
      "last_agent_step",
      fallback,
      attributionConfidence.lastAgentStep,
      `no error or cue in the trace; last substantive step of ${s?.actor ?? "an agent"} before the final answer`,
    );
  }
  return locatedAt(
    steps,
    "last_agent_step",
    last,
    attributionConfidence.lastStep,
    "no error or cue in the trace and no earlier agent step; the final step",
  );
}
