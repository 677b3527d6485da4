import type { Attribution, TaskCompleted } from "../contracts/index.js";
import { isLowInformationMessage } from "../memory/low-information.js";
import { answerSourceFailure } from "./answer-source-failure.js";
import { attributionConfidence } from "./attribution-confidence.js";
import { failureText, givingUp, lastStepGuess, repetition, shortcutFrom } from "./cue-rules.js";
import { explicitFailure, recoveredFailure, scanErrors } from "./explicit-errors.js";
import { locatedAt, type AttributionBasis, type LocatedFailure } from "./located-failure.js";
import { claimMatch, messageMatch } from "./phrase-match.js";
import { stateChangeFailure, teamShapeFailure } from "./team-rules.js";
import { createTraceView } from "./trace-view.js";
import { defaultCalibration, type AttributionCalibration } from "./calibration.js";
import { baselineAgent, baselineStep, responsibleAgent } from "./trace-baselines.js";

/**
 * Where a failed trace went wrong and which agent did it, from the trace alone (no model).
 *
 * Two kinds of failure are read differently.
 *
 * A wrong answer (the task reports no error, or one that says only that the answer was judged
 * wrong) is explained by where the answer came from. Tool errors, blocked pages and crashed
 * scripts that the team went past are not why the answer is wrong; the step the answer rests on
 * is. The rules, first match wins:
 * A1. a claim that verification refuted or could not verify, where it was first stated;
 * A2. the answer's source: the first step before the final one that states the answer's value
 *     (see answer-source.ts). From there:
 *     - the value came out of a run that failed (an error status, a non-zero exit): the first
 *       agent step that then stated it anyway ignored the failure (`ignored_error`);
 *     - from there to the final answer, the first step where an agent took a shortcut on purpose,
 *       in its own words: guessed, assumed, extrapolated, or declared a check unnecessary
 *       (`shortcut`); a shortcut before the answer's source did not produce the answer;
 *     - the source says its figure covers only part of what was asked ("on this page", "so
 *       far"): the next step of another agent, which took the part for the whole, stopped early
 *       (`shortcut`);
 *     - the value is the printed output of code that ran: the step that wrote that code
 *       (`computed_by`);
 *     - the value was in a page or a file a tool fetched: the first agent step that then stated
 *       it, because choosing it was that agent's decision (`answer_source`); otherwise the
 *       source step itself.
 * When the answer's value appears nowhere before the final answer, or the task has none, the
 * rules below apply as for any failure.
 *
 * Any other failure (a reported error, a timeout) is explained by the error. The rules, strongest
 * evidence first; the first that finds a step decides:
 * 1. an explicit failure the trace never recovered from: an `error_event`, a step with an
 *    `error`, a tool response with an error status (HTTP ≥ 400, `status: "error"`,
 *    `is_error: true`);
 * 2. the step whose text holds the task error's message;
 * 3. the step that first states a claim that verification refuted or could not verify;
 * 4. the answer's source, as in A2, when a strong rule found it (a failed run, a shortcut, code
 *    that printed it);
 * 4a. the run's shape (team-rules.ts), for an outcome no step explains: a tool-using agent's first
 *    call that changed state; a coding team's first code; an orchestrated team's first worker
 *    step; then the answer's source found by the weaker rule. On public annotated logs these name
 *    the decisive step far more often than the cues below, which mostly find a later symptom;
 * 5. the first step where an agent took a shortcut on purpose (as in A2);
 * 6. the first step of an agent that gave up ("could not find", "unable to", ...), or a tool
 *    response that came back empty;
 * 7. the first step whose text reports a failure ("error", "exception", "Traceback", "failed");
 * 8. an explicit failure the trace later worked around;
 * 9. the first step the agent then repeated word for word (it was stuck from there on);
 * 10. failing all that, the last substantive step of a non-orchestrator agent before the final
 *    answer: a guess, and its confidence says so.
 * A give-up cue found in an orchestrator's step (it reports what another agent failed to do) is
 * attributed to the last agent step before it; a shortcut is the speaker's own decision and
 * stays with it. The final step (the answer) and the user's own steps are not searched for cues.
 *
 * Every rule is a linear pass over the steps' text: a step may be a megabyte of untrusted text.
 * The confidences were measured (attribution-confidence.ts).
 *
 * This file composes the rules in the order above; each lives with its kind of evidence:
 * explicit errors (rules 1 and 8) in explicit-errors.ts, the error's message and the claims
 * (2, 3, A1) in phrase-match.ts, the answer's source (A2, 4) in answer-source-failure.ts, the
 * run's shape (4a) in team-rules.ts, and the cues, repetition and the guess (5–7, 9, 10) in
 * cue-rules.ts; trace-view.ts holds what they share about one trace.
 */

/**
 * Finds the step a failure is attributed to, and on what basis. Works for any outcome. The scan
 * is linear and a trace may hold hundreds of kilobytes: a caller that needs the answer in several
 * places computes it once and passes it on (the pipeline carries it in the event's facts).
 */
export function locateByEvidence(event: TaskCompleted): LocatedFailure {
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
  /** A source found by a strong rule (a failed run, a shortcut, code that printed it). */
  const strong = (source: LocatedFailure | null) =>
    source && source.basis !== "answer_source" ? source : null;

  // A. A wrong answer: where the answer came from (see the comment at the top). Without a
  // traceable source, a shortcut anywhere still explains it better than an error the team went
  // past. A tool-using agent's first write (firstStateChange: 0.85 measured) is better evidence
  // than an "assume"/"guess" cue (0.55) or the weak answer's source (0.2): on real tool-use logs
  // the cue, where one fires at all, is the agent talking to the user, not the decision that failed.
  const wrongAnswer = event.error === undefined || isLowInformationMessage(event.error.message);
  if (wrongAnswer) {
    const source = answerSourceFailure(view);
    const sourced =
      claimMatch(view) ?? strong(source) ?? stateChangeFailure(steps) ?? source ?? shortcutFrom(view);
    if (sourced) return sourced;
  }

  // 1–4. A reported error: where it happened, where its message is, which claim was wrong.
  const explained =
    explicitFailure(steps, errors) ?? messageMatch(view) ?? (wrongAnswer ? null : claimMatch(view));
  if (explained) return explained;
  // An outcome that no step explains: where the run was committed to it. A source found by a
  // strong rule still comes first.
  const source = wrongAnswer ? null : answerSourceFailure(view);
  const failed = stateChangeFailure(steps) ?? strong(source) ?? teamShapeFailure(steps) ?? source;
  if (failed) return failed;

  // 5. A shortcut taken anywhere, when the answer cannot be traced; then 6. giving up or an empty
  // tool response, 7. text that reports a failure, 8. a worked-around error, 9. repetition, and
  // 10. the guess.
  return (
    (wrongAnswer ? null : shortcutFrom(view)) ??
    givingUp(view) ??
    failureText(view) ??
    recoveredFailure(steps, errors) ??
    repetition(view) ??
    lastStepGuess(view)
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
  const found = locateByEvidence(event);
  const steps = event.events;
  if (found.stepIndex === undefined) return found;
  // What the trace itself reports (an error event, the task's own error message, a refuted claim)
  // is a fact, not an inference: it stands unless measured worse than the fallback. Public
  // annotated logs hold almost none of it, so its confidence is the prior in
  // attribution-confidence.ts, and it never sets the rules above a model (heldOutPrecision).
  if (reportedFacts.has(found.basis) && calibration.byBasis[found.basis] === undefined) return found;
  const measured = calibration.byBasis[found.basis];
  const trusted = measured !== undefined && measured.n >= calibration.minRuns ? measured : undefined;
  const fallback = calibration.fallback;
  const stepTrusted =
    trusted !== undefined && trusted.near > (trusted.fallbackNear ?? fallback.reliability.near);
  const agentTrusted =
    trusted !== undefined && trusted.agent > (trusted.fallbackAgent ?? fallback.reliability.agent);
  const index = stepTrusted ? found.stepIndex : (baselineStep(event, fallback.step) ?? found.stepIndex);
  const actor = agentTrusted
    ? responsibleAgent(steps, found.stepIndex)
    : baselineAgent(event, fallback.agent);
  if (stepTrusted) {
    const { actor: _ignored, ...rest } = found.attribution;
    return {
      ...found,
      attribution: {
        ...rest,
        ...(actor !== undefined ? { actor } : {}),
        confidence: round(trusted.exact),
      },
    };
  }
  const located = locatedAt(
    steps,
    "structural_fallback",
    index,
    round(fallback.reliability.exact),
    `no kind of evidence in this trace is measured more precise than the rule "${fallback.step.replace(/_/g, " ")}"`,
  );
  const { actor: _stepActor, ...rest } = located.attribution;
  return {
    ...located,
    attribution: { ...rest, ...(actor !== undefined ? { actor } : {}) },
    evidenceIndex: found.stepIndex,
  };
}

const round = (x: number) => Math.round(x * 100) / 100;

const reportedFacts: ReadonlySet<AttributionBasis> = new Set([
  "explicit_error",
  "message_match",
  "claim_match",
  "ignored_error",
  "no_steps",
]);

/**
 * The best offline attribution of a failed task: the step, the agent and the tool held
 * responsible, how sure, and why. Undefined for a success.
 */
export function attributeFailure(event: TaskCompleted): Attribution | undefined {
  if (event.outcome === "success") return undefined;
  return locateFailure(event).attribution;
}
