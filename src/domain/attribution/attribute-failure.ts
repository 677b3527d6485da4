import type { Attribution, TaskCompleted, TraceEvent } from "../contracts/index.js";
import { isLowInformationMessage } from "../memory/low-information.js";
import { answerValue, statesAnswer } from "./answer-source.js";
import { firstCodeStep, firstStateChange, firstWorkerStep } from "./team-rules.js";
import {
  evidenceMaxChars,
  failureCues,
  fingerprint,
  firstCue,
  isSubstantive,
  needleOf,
  normalise,
  partialCues,
  quoteAround,
  reasoningCues,
  shortcutCues,
  squeeze,
  type Cue,
} from "./trace-scan.js";

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
 * The confidences were measured: how often each basis named the annotated step, on public
 * annotated failure logs for the rules that fire there (bench/attribution.ts), else on a corpus of
 * labelled multi-agent failures written here (docs/architecture.md, "Failure attribution").
 */

export type AttributionBasis =
  | "explicit_error"
  | "message_match"
  | "claim_match"
  | "ignored_error"
  | "shortcut"
  | "computed_by"
  | "answer_source"
  | "reasoning_cue"
  | "empty_response"
  | "failure_text"
  | "repetition"
  | "last_agent_step"
  | "first_state_change"
  | "first_code"
  | "first_worker_step"
  | "no_steps";

/** How sure each rule is: explicit evidence high, textual cues middling, the fallback a guess. */
export const attributionConfidence = {
  explicitErrorWithTool: 0.9,
  explicitError: 0.8,
  messageMatch: 0.7,
  claimMatch: 0.6,
  ignoredError: 0.6,
  shortcut: 0.55,
  computedBy: 0.5,
  /**
   * The step the answer's value was first stated at: right for 2 of the 10 runs it decided on the
   * tune split of public annotated failure logs (bench/attribution.ts), although 40 of 53 on the
   * corpus written here; the real logs are the yardstick.
   */
  answerSource: 0.2,
  reasoningCue: 0.5,
  emptyResponse: 0.5,
  failureText: 0.45,
  /** An explicit error the trace later worked around, when nothing else points anywhere. */
  recoveredError: 0.42,
  repetition: 0.4,
  /** Subtracted when an orchestrator's report points at an earlier agent step. */
  reportedByOrchestrator: 0.1,
  lastAgentStep: 0.3,
  /**
   * The shape rules (team-rules.ts), each its precision at naming the annotated step on the tune
   * split of public annotated failure logs (bench/attribution.ts): 55 of 64, 16 of 54, 8 of 35.
   */
  firstStateChange: 0.85,
  firstCode: 0.3,
  firstWorkerStep: 0.2,
  lastStep: 0.2,
  noSteps: 0.05,
} as const;

export interface LocatedFailure {
  basis: AttributionBasis;
  /** Index into `event.events`; undefined only when the trace has no steps. */
  stepIndex: number | undefined;
  step: TraceEvent | undefined;
  attribution: Attribution;
}

/** The HTTP-like status a step reports, if any (metadata or the error's code). */
export function statusOf(step: TraceEvent): number | undefined {
  const meta = step.metadata ?? {};
  const raw = meta.http_status ?? meta.status ?? meta.status_code ?? step.error?.code;
  const status = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : NaN;
  return Number.isInteger(status) && status >= 100 && status < 600 ? status : undefined;
}

/** A step that says itself that it failed. */
export function isErrorStep(step: TraceEvent): boolean {
  const status = statusOf(step);
  if (step.type === "error_event" || step.error !== undefined || (status !== undefined && status >= 400))
    return true;
  const meta = step.metadata;
  return step.type === "tool_response" && (meta?.is_error === true || meta?.status === "error");
}

const maxClaimsSearched = 10;

type Role = "orchestrator" | "user" | "agent";

/** Orchestrators and managers coordinate; humans and users ask. Anyone else does the work. */
function roleOf(actor: string | undefined): Role {
  if (actor === undefined) return "agent";
  const lower = actor.toLowerCase();
  if (lower.includes("orchestrat") || lower.includes("manager")) return "orchestrator";
  if (lower.includes("human") || lower === "user") return "user";
  return "agent";
}

function attributionAt(
  steps: readonly TraceEvent[],
  index: number,
  confidence: number,
  evidence: string,
  toolFrom?: TraceEvent,
): Attribution {
  const step = steps[index];
  const actor = step?.actor ?? toolFrom?.actor;
  const toolName = step?.toolName ?? toolFrom?.toolName;
  return {
    ...(step ? { eventId: step.eventId, stepIndex: index } : {}),
    ...(actor !== undefined ? { actor } : {}),
    ...(toolName !== undefined ? { toolName } : {}),
    confidence,
    evidence: evidence.slice(0, evidenceMaxChars),
  };
}

/** The call that led to step `index`: the last tool call before it, of the same tool if it names one. */
function callBefore(steps: readonly TraceEvent[], index: number): TraceEvent | undefined {
  const tool = steps[index]?.toolName;
  for (let i = index - 1; i >= 0; i -= 1) {
    const s = steps[i];
    if (s?.type === "tool_call" && (tool === undefined || s.toolName === tool)) return s;
  }
  return undefined;
}

/** A tool's output (or an error event): what the environment returned, not what an agent said. */
function isToolOutput(step: TraceEvent | undefined): boolean {
  return step?.type === "tool_response" || step?.type === "error_event";
}

/**
 * The step holding the code that the run at `index` executed, or -1 when that run's input was
 * not code. Each run executes one code message (AutoGen's executors run the code in a message; a
 * code tool's call holds it), so runs and code messages pair up like brackets: a run belongs to
 * the latest code message before it that no other run has taken. One pass up to `index`.
 */
function codeOfRun(steps: readonly TraceEvent[], index: number): number {
  const pending: number[] = [];
  let message: TraceEvent | undefined; // the latest step that is not a tool output
  const holdsCode = (s: TraceEvent | undefined) =>
    s !== undefined && ((s.type === "tool_call" && isCodeTool(s.toolName)) || s.content.includes("```"));
  const isCodeRun = (s: TraceEvent) => isCodeTool(s.toolName) || holdsCode(message);
  for (let i = 0; i < index; i += 1) {
    const s = steps[i];
    if (!s) continue;
    if (!isToolOutput(s)) {
      message = s;
      if (holdsCode(s)) pending.push(i);
    } else if (isCodeRun(s)) pending.pop();
  }
  const run = steps[index];
  return run && isCodeRun(run) ? (pending.pop() ?? -1) : -1;
}

const codeToolWords = ["code", "exec", "python", "shell", "terminal", "sandbox", "interpreter"];
function isCodeTool(name: string | undefined): boolean {
  const lower = name?.toLowerCase() ?? "";
  return codeToolWords.some((w) => lower.includes(w));
}

/**
 * Finds the step a failure is attributed to, and on what basis. Works for any outcome. The scan
 * is linear and a trace may hold hundreds of kilobytes: a caller that needs the answer in several
 * places computes it once and passes it on (the pipeline carries it in the event's facts).
 */
export function locateFailure(event: TaskCompleted): LocatedFailure {
  const steps = event.events;
  const located = (basis: AttributionBasis, index: number, attribution: Attribution): LocatedFailure => ({
    basis,
    stepIndex: index,
    step: steps[index],
    attribution,
  });
  if (steps.length === 0) {
    return {
      basis: "no_steps",
      stepIndex: undefined,
      step: undefined,
      attribution: { confidence: attributionConfidence.noSteps, evidence: "the trace has no steps" },
    };
  }

  // 1. Explicit failure the trace never recovered from. An error followed by a success of the
  // same tool (or, without a tool, of the same agent's same kind of step) was worked around: a
  // 403 on one page before the right page opened is not where the task went wrong. One backward
  // pass keeps this linear.
  const recoveredAt = new Set<string>();
  let errorIndex = -1;
  let firstRecovered = -1;
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    const s = steps[i];
    if (!s) continue;
    const key =
      s.toolName !== undefined ? `tool\u0000${s.toolName}` : `actor\u0000${s.actor ?? ""}\u0000${s.type}`;
    if (!isErrorStep(s)) {
      recoveredAt.add(key);
      continue;
    }
    if (recoveredAt.has(key)) firstRecovered = i;
    else if (errorIndex < 0 || i < errorIndex) errorIndex = i;
  }
  const explicitFailure = (): LocatedFailure | null => {
    const errorStep = steps[errorIndex];
    if (!errorStep) return null;
    const call = callBefore(steps, errorIndex);
    const tool = errorStep.toolName ?? call?.toolName;
    const message = errorStep.error?.message ?? errorStep.content;
    return located(
      "explicit_error",
      errorIndex,
      attributionAt(
        steps,
        errorIndex,
        tool !== undefined
          ? attributionConfidence.explicitErrorWithTool
          : attributionConfidence.explicitError,
        squeeze(message || `${errorStep.type} with an error status`),
        call,
      ),
    );
  };

  const lowerCache = new Map<number, string>();
  const lower = (i: number): string => {
    let text = lowerCache.get(i);
    if (text === undefined) {
      text = steps[i]?.content.toLowerCase() ?? "";
      lowerCache.set(i, text);
    }
    return text;
  };
  const flatCache = new Map<number, string>();
  const flat = (i: number): string => {
    let text = flatCache.get(i);
    if (text === undefined) {
      text = normalise(steps[i]?.content ?? "");
      flatCache.set(i, text);
    }
    return text;
  };
  const findPhrase = (needle: string): { index: number; quote: string } | null => {
    for (let i = 0; i < steps.length; i += 1) {
      const content = steps[i]?.content ?? "";
      const at = lower(i).indexOf(needle);
      if (at >= 0) return { index: i, quote: quoteAround(content, at) };
      // Same words, other line breaks: compare with whitespace collapsed.
      const flatAt = flat(i).indexOf(needle);
      if (flatAt >= 0) return { index: i, quote: quoteAround(flat(i), flatAt) };
    }
    return null;
  };

  // 2. The task error's message, quoted by a step.
  const messageMatch = (): LocatedFailure | null => {
    const messageNeedle = needleOf(event.error?.message);
    const byMessage = messageNeedle ? findPhrase(messageNeedle) : null;
    if (!byMessage) return null;
    return located(
      "message_match",
      byMessage.index,
      attributionAt(steps, byMessage.index, attributionConfidence.messageMatch, byMessage.quote),
    );
  };

  // 3. A claim verification refuted or could not verify, where it was first stated.
  // A bounded number of claims, so 500 of them cannot multiply the scan of a long trace.
  const claimMatch = (): LocatedFailure | null => {
    for (const result of (event.verificationResults ?? []).slice(0, maxClaimsSearched)) {
      if (result.status === "verified") continue;
      const needle = needleOf(result.claimText);
      const byClaim = needle ? findPhrase(needle) : null;
      if (!byClaim) continue;
      return located(
        "claim_match",
        byClaim.index,
        attributionAt(
          steps,
          byClaim.index,
          attributionConfidence.claimMatch,
          `${result.status} claim: ${byClaim.quote}`,
        ),
      );
    }
    return null;
  };

  // Cues are searched in the agents' steps, not in the final answer or the user's request.
  const last = steps.length - 1;
  const searchable: number[] = [];
  for (let i = 0; i < (last > 0 ? last : 1); i += 1) {
    if (roleOf(steps[i]?.actor) !== "user") searchable.push(i);
  }
  const lastAgentStepBefore = (index: number): number => {
    for (let i = index - 1; i >= 0; i -= 1) {
      const s = steps[i];
      if (s && roleOf(s.actor) === "agent" && isSubstantive(s)) return i;
    }
    return -1;
  };
  const byCue = (
    cues: readonly Cue[],
    basis: AttributionBasis,
    confidence: number,
    before = steps.length,
    reported = true,
    from = 0,
  ) => {
    for (const i of searchable) {
      if (i >= before) break;
      if (i < from) continue;
      const found = firstCue(lower(i), cues);
      if (!found) continue;
      const step = steps[i];
      const quote = quoteAround(step?.content ?? "", found.at);
      const agent = reported && roleOf(step?.actor) === "orchestrator" ? lastAgentStepBefore(i) : -1;
      if (agent >= 0) {
        return located(
          basis,
          agent,
          attributionAt(
            steps,
            agent,
            confidence - attributionConfidence.reportedByOrchestrator,
            `${step?.actor ?? "the orchestrator"} reported at step ${String(i)}: ${quote}`,
          ),
        );
      }
      return located(basis, i, attributionAt(steps, i, confidence, quote));
    }
    return null;
  };

  /** A2: the step the final answer's value comes from, and what made it wrong. */
  function answerSource(): LocatedFailure | null {
    const value = answerValue(event);
    if (!value) return null;
    // A step that restates the whole question (the plan, the task hand-out) is not a source.
    const questionNeedle = needleOf(event.task.description, 24);
    const restatesQuestion = (i: number) =>
      questionNeedle !== null && (lower(i).includes(questionNeedle) || flat(i).includes(questionNeedle));
    const states = (i: number) => {
      const s = steps[i];
      return s !== undefined && statesAnswer(s, value) && !restatesQuestion(i);
    };
    const source = searchable.find(states) ?? -1;
    const sourceStep = steps[source];
    if (!sourceStep) return null;
    /** The first agent step after `index` that states the value too. */
    const restated = (index: number): number =>
      searchable.find((i) => i > index && !isToolOutput(steps[i]) && states(i)) ?? -1;
    const quoteOf = (i: number, prefix: string) =>
      `${prefix}${squeeze(steps[i]?.content ?? "", evidenceMaxChars - prefix.length)}`;
    const at = (basis: AttributionBasis, i: number, confidence: number, evidence: string) =>
      located(basis, i, attributionAt(steps, i, confidence, evidence));

    let stated = source;
    let code = -1;
    if (isToolOutput(sourceStep)) {
      const claim = restated(source);
      if (isErrorStep(sourceStep) && claim >= 0) {
        // The value came out of a run that failed. If a run that succeeded printed it again
        // before anyone stated it, that run is its source; otherwise whoever stated it next
        // ignored the failure.
        const rerun = searchable.find((i) => {
          const s = steps[i];
          return (
            i > source && i < claim && isToolOutput(s) && s !== undefined && !isErrorStep(s) && states(i)
          );
        });
        if (rerun === undefined)
          return at(
            "ignored_error",
            claim,
            attributionConfidence.ignoredError,
            quoteOf(claim, `stated after the failure at step ${String(source)}: `),
          );
        code = codeOfRun(steps, rerun);
      } else code = codeOfRun(steps, source);
      if (claim >= 0) stated = claim;
    }
    // A shortcut from the source on: the answer was guessed, or accepted unchecked.
    const shortcut = byCue(shortcutCues, "shortcut", attributionConfidence.shortcut, last, false, source);
    if (shortcut) return shortcut;
    // A partial figure taken for the whole: the next agent to act on it stopped early.
    const statedStep = steps[stated];
    const partial = statedStep && !isToolOutput(statedStep) ? firstCue(lower(stated), partialCues) : null;
    if (statedStep && partial) {
      const taker = searchable.find((i) => {
        const s = steps[i];
        return i > stated && s?.type === "llm_response" && s.actor !== statedStep.actor;
      });
      if (taker !== undefined)
        return at(
          "shortcut",
          taker,
          attributionConfidence.shortcut,
          `took a partial figure for the answer (step ${String(stated)}: ${quoteAround(statedStep.content, partial.at, 120)})`,
        );
    }
    // Printed by code that ran: the code is where the value was computed.
    if (code >= 0)
      return at(
        "computed_by",
        code,
        attributionConfidence.computedBy,
        quoteOf(code, `its output at step ${String(source)} is the answer: `),
      );
    // Fetched from a page or a file, the agent that took the value from it chose it; or the
    // value was first written by an agent.
    return at("answer_source", stated, attributionConfidence.answerSource, quoteOf(stated, ""));
  }

  /** Where the run was committed to its path, from its shape (team-rules.ts). */
  function stateChange(): LocatedFailure | null {
    const i = firstStateChange(steps);
    if (i < 0) return null;
    return located(
      "first_state_change",
      i,
      attributionAt(steps, i, attributionConfidence.firstStateChange, squeeze(steps[i]?.content ?? "")),
    );
  }
  function teamShape(): LocatedFailure | null {
    const code = firstCodeStep(steps);
    if (code >= 0)
      return located(
        "first_code",
        code,
        attributionAt(steps, code, attributionConfidence.firstCode, squeeze(steps[code]?.content ?? "")),
      );
    const worker = firstWorkerStep(steps, roleOf);
    if (worker >= 0)
      return located(
        "first_worker_step",
        worker,
        attributionAt(
          steps,
          worker,
          attributionConfidence.firstWorkerStep,
          squeeze(steps[worker]?.content ?? ""),
        ),
      );
    return null;
  }

  // A. A wrong answer: where the answer came from (see the comment at the top).
  const wrongAnswer = event.error === undefined || isLowInformationMessage(event.error.message);
  // A wrong answer without a traceable source: a shortcut anywhere still explains it better than
  // an error the team went past.
  const shortcutAnywhere = () => byCue(shortcutCues, "shortcut", attributionConfidence.shortcut, last, false);
  // A tool-using agent's first write (firstStateChange: 0.85 measured) is better evidence than
  // an "assume"/"guess" cue (0.55) or the weak answer's source (0.2): on real tool-use logs the
  // cue, where one fires at all, is the agent talking to the user, not the decision that failed.
  if (wrongAnswer) {
    const source = answerSource();
    const strong = source && source.basis !== "answer_source" ? source : null;
    const sourced = claimMatch() ?? strong ?? stateChange() ?? source ?? shortcutAnywhere();
    if (sourced) return sourced;
  }

  // 1–4. A reported error: where it happened, where its message is, which claim was wrong.
  const explained = explicitFailure() ?? messageMatch() ?? (wrongAnswer ? null : claimMatch());
  if (explained) return explained;
  // An outcome that no step explains: where the run was committed to it. A source found by a
  // strong rule (a failed run, a shortcut, code that printed it) still comes first.
  const source = wrongAnswer ? null : answerSource();
  const failed =
    stateChange() ?? (source && source.basis !== "answer_source" ? source : null) ?? teamShape() ?? source;
  if (failed) return failed;

  // 5. A shortcut taken anywhere, when the answer cannot be traced.
  const shortcut = wrongAnswer ? null : shortcutAnywhere();
  if (shortcut) return shortcut;

  // 6. Giving up — or an empty tool response, whichever comes first.
  const emptyIndex = searchable.find((i) => {
    const s = steps[i];
    return s?.type === "tool_response" && s.content.trim() === "";
  });
  const reasoning = byCue(reasoningCues, "reasoning_cue", attributionConfidence.reasoningCue, emptyIndex);
  if (reasoning) return reasoning;
  if (emptyIndex !== undefined) {
    return located(
      "empty_response",
      emptyIndex,
      attributionAt(
        steps,
        emptyIndex,
        attributionConfidence.emptyResponse,
        "the tool response was empty",
        callBefore(steps, emptyIndex),
      ),
    );
  }

  // 7. Text that reports a failure.
  const failure = byCue(failureCues, "failure_text", attributionConfidence.failureText);
  if (failure) return failure;

  // 8. A worked-around error is still a better guess than repetition or the last step.
  const recovered = steps[firstRecovered];
  if (recovered) {
    return located(
      "explicit_error",
      firstRecovered,
      attributionAt(
        steps,
        firstRecovered,
        attributionConfidence.recoveredError,
        `worked around later: ${squeeze(recovered.error?.message ?? recovered.content, evidenceMaxChars - 20)}`,
        callBefore(steps, firstRecovered),
      ),
    );
  }

  // 9. The first step the same agent then repeated word for word.
  const seen = new Map<string, number[]>();
  for (const i of searchable) {
    const s = steps[i];
    if (!s || !isSubstantive(s)) continue;
    const key = `${s.actor ?? ""}\u0000${String(s.content.length)}:${String(fingerprint(s.content))}`;
    const earlier = seen.get(key);
    const origin = earlier?.find((j) => steps[j]?.content === s.content);
    if (origin !== undefined) {
      return located(
        "repetition",
        origin,
        attributionAt(
          steps,
          origin,
          attributionConfidence.repetition,
          `repeated word for word at step ${String(i)}: ${squeeze(s.content, evidenceMaxChars - 40)}`,
        ),
      );
    }
    if (earlier) earlier.push(i);
    else seen.set(key, [i]);
  }

  // 10. A guess: the last substantive agent step before the final answer.
  const fallback = lastAgentStepBefore(last);
  if (fallback >= 0) {
    const s = steps[fallback];
    return located(
      "last_agent_step",
      fallback,
      attributionAt(
        steps,
        fallback,
        attributionConfidence.lastAgentStep,
        `no error or cue in the trace; last substantive step of ${s?.actor ?? "an agent"} before the final answer`,
      ),
    );
  }
  return located(
    "last_agent_step",
    last,
    attributionAt(
      steps,
      last,
      attributionConfidence.lastStep,
      "no error or cue in the trace and no earlier agent step; the final step",
    ),
  );
}

/**
 * The best offline attribution of a failed task: the step, the agent and the tool held
 * responsible, how sure, and why. Undefined for a success.
 */
export function attributeFailure(event: TaskCompleted): Attribution | undefined {
  if (event.outcome === "success") return undefined;
  return locateFailure(event).attribution;
}
