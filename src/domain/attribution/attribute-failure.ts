import type { Attribution, TaskCompleted } from "../contracts/index.js";
import { isLowInformationMessage } from "../memory/low-information.js";
import { attributionConfidence } from "./attribution-confidence.js";
import { failureText, repetition } from "./cue-rules.js";
import { explicitFailure, recoveredFailure, scanErrors } from "./explicit-errors.js";
import { locatedAt, reportedBases, type LocatedFailure } from "./located-failure.js";
import { claimMatch, messageMatch } from "./phrase-match.js";
import { stateChangeFailure } from "./state-change.js";
import { createTraceView } from "./trace-view.js";
import { defaultCalibration, type AttributionCalibration } from "./calibration.js";
import { baselineAgent, baselineStep, responsibleAgent } from "./trace-baselines.js";

/**
 * Where a failed trace went wrong and which agent did it, from the trace alone (no model).
 *
 * The rules, first match wins. What the trace itself reports comes first, as a fact:
 * 1. an explicit failure the trace never recovered from: an `error_event`, a step with an `error`,
 *    a tool response with an error status (HTTP ≥ 400, `status: "error"`, `is_error: true`) —
 *    not for a wrong answer, where an error the team went past is not why the answer is wrong;
 * 2. the step whose text holds the task error's message;
 * 3. the step that first states a claim that verification refuted or could not verify.
 * Then the evidence that was measured to hold on a source it was not fitted to:
 * 4. a tool-using agent's first call that changed state (state-change.ts);
 * 5. text that reports a failure ("error", "exception", "Traceback", "failed");
 * 6. the first step the agent then repeated word for word (it was stuck from there on);
 * 7. for a wrong answer, an explicit failure after all; then one the trace later worked around.
 * Nothing found: the fallback, a rule that ignores the trace's content (calibration.ts), says so.
 *
 * Rules that did not hold where nobody tuned them are gone: the answer's source and the code that
 * printed it, a team's first code and first worker step, cues of a shortcut or of giving up, and the
 * last agent step as a guess (docs/benchmarks.md, "Generalisation", lists each with its lift).
 * Every rule is a linear pass over the steps' text: a step may be a megabyte of untrusted text.
 */

/**
 * Finds the step a failure is attributed to, and on what basis, before the calibration decides
 * what to trust. Works for any outcome. The scan is linear and a trace may hold hundreds of
 * kilobytes: a caller that needs the answer in several places computes it once and passes it on
 * (the pipeline carries it in the event's facts).
 */
export function locateByEvidence(
  event: TaskCompleted,
  calibration: AttributionCalibration = defaultCalibration,
): LocatedFailure {
  const steps = event.events;
  if (steps.length === 0) {
    return {
      basis: "no_steps",
      stepIndex: undefined,
      step: undefined,
      attribution: { confidence: attributionConfidence.noSteps, evidence: "the trace has no steps" },
    };
  }
  const errors = scanErrors(steps);
  const view = createTraceView(event);
  const wrongAnswer = event.error === undefined || isLowInformationMessage(event.error.message);
  const reported = wrongAnswer
    ? claimMatch(view)
    : (explicitFailure(steps, errors) ?? messageMatch(view) ?? claimMatch(view));
  return (
    reported ??
    stateChangeFailure(steps) ??
    failureText(view) ??
    repetition(view) ??
    (wrongAnswer ? explicitFailure(steps, errors) : null) ??
    recoveredFailure(steps, errors) ??
    fallbackFailure(event, calibration)
  );
}

/** The fallback's step, when no evidence in the trace points anywhere. */
function fallbackFailure(event: TaskCompleted, calibration: AttributionCalibration): LocatedFailure {
  const { fallback } = calibration;
  const index = baselineStep(event, fallback.step) ?? event.events.length - 1;
  return locatedAt(
    event.events,
    "structural_fallback",
    index,
    round(fallback.reliability.exact),
    `no evidence in the trace; the rule "${fallback.step.replace(/_/g, " ")}" chose this step`,
  );
}

/**
 * Where a failed trace went wrong and who did it, trusting only what has been measured to hold.
 * The evidence rules above find a step; their kind of evidence decides the step only when it was
 * measured more precise than the fallback (a rule that ignores the trace's content, see
 * calibration.ts), and decides the agent only when its agent precision beats the fallback agent's.
 * The confidence is the measured precision of what decided. A tool's output is evidence, never the
 * responsible agent: the agent that called the tool is.
 */
export function locateFailure(
  event: TaskCompleted,
  calibration: AttributionCalibration = defaultCalibration,
): LocatedFailure {
  const found = locateByEvidence(event, calibration);
  const steps = event.events;
  if (found.stepIndex === undefined) return found;
  const fallback = calibration.fallback;
  if (found.basis === "structural_fallback") return withActor(found, baselineAgent(event, fallback.agent));
  // What the trace itself reports (an error event, the task's own error message, a refuted claim)
  // is a fact, not an inference: it stands unless measured worse than the fallback. Public
  // annotated logs hold almost none of it, so its confidence is the prior in
  // attribution-confidence.ts, and it never sets the rules above a model (heldOutPrecision).
  if (reportedBases.has(found.basis) && calibration.byBasis[found.basis] === undefined)
    return withActor(found, responsibleAgent(steps, found.stepIndex));
  const measured = calibration.byBasis[found.basis];
  const trusted = measured !== undefined && measured.n >= calibration.minRuns ? measured : undefined;
  const stepTrusted =
    trusted !== undefined && trusted.near > (trusted.fallbackNear ?? fallback.reliability.near);
  const agentTrusted =
    trusted !== undefined && trusted.agent > (trusted.fallbackAgent ?? fallback.reliability.agent);
  const actor = agentTrusted
    ? responsibleAgent(steps, found.stepIndex)
    : baselineAgent(event, fallback.agent);
  if (stepTrusted) {
    const located = withActor(found, actor);
    return { ...located, attribution: { ...located.attribution, confidence: round(trusted.exact) } };
  }
  const located = locatedAt(
    steps,
    "structural_fallback",
    baselineStep(event, fallback.step) ?? found.stepIndex,
    round(fallback.reliability.exact),
    `no kind of evidence in this trace is measured more precise than the rule "${fallback.step.replace(/_/g, " ")}"`,
  );
  return { ...withActor(located, actor), evidenceIndex: found.stepIndex };
}

/** The same failure with `actor` as the agent held responsible (none named when undefined). */
function withActor(located: LocatedFailure, actor: string | undefined): LocatedFailure {
  const { actor: _named, ...rest } = located.attribution;
  return { ...located, attribution: { ...rest, ...(actor !== undefined ? { actor } : {}) } };
}

const round = (x: number) => Math.round(x * 100) / 100;

/**
 * The best offline attribution of a failed task: the step, the agent and the tool held
 * responsible, how sure, and why. Undefined for a success.
 */
export function attributeFailure(event: TaskCompleted): Attribution | undefined {
  if (event.outcome === "success") return undefined;
  return locateFailure(event).attribution;
}
