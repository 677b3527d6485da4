import type { Attribution, TaskCompleted, TraceEvent } from "../contracts/index.js";
import {
  evidenceMaxChars,
  failureCues,
  fingerprint,
  firstCue,
  isSubstantive,
  needleOf,
  normalise,
  quoteAround,
  reasoningCues,
  squeeze,
  type Cue,
} from "./trace-scan.js";

/**
 * Where a failed trace went wrong and which agent did it, from the trace alone (no model).
 *
 * The rules, strongest evidence first; the first that finds a step decides:
 * 1. an explicit failure: an `error_event`, a step with an `error`, a tool response with an error
 *    status (HTTP ≥ 400, `status: "error"`, `is_error: true`);
 * 2. the step whose text holds the task error's message;
 * 3. the step that first states a claim that verification refuted or could not verify;
 * 4. the first step of an agent that guessed, assumed or gave up ("I'll guess", "could not
 *    find", "unable to", ...), or a tool response that came back empty;
 * 5. the first step whose text reports a failure ("error", "exception", "Traceback", "failed");
 * 6. the first step the agent then repeated word for word (it was stuck from there on);
 * 7. failing all that, the last substantive step of a non-orchestrator agent before the final
 *    answer: a guess, and its confidence says so.
 * A cue found in an orchestrator's step (it reports what another agent failed to do) is
 * attributed to the last agent step before it. The final step (the answer) and the user's own
 * steps are not searched for cues.
 *
 * Every rule is a linear pass over the steps' text: a step may be a megabyte of untrusted text.
 */

export type AttributionBasis =
  | "explicit_error"
  | "message_match"
  | "claim_match"
  | "reasoning_cue"
  | "empty_response"
  | "failure_text"
  | "repetition"
  | "last_agent_step"
  | "no_steps";

/** How sure each rule is: explicit evidence high, textual cues middling, the fallback a guess. */
export const attributionConfidence = {
  explicitErrorWithTool: 0.9,
  explicitError: 0.8,
  messageMatch: 0.7,
  claimMatch: 0.6,
  reasoningCue: 0.5,
  emptyResponse: 0.5,
  failureText: 0.45,
  /** An explicit error the trace later worked around, when nothing else points anywhere. */
  recoveredError: 0.42,
  repetition: 0.4,
  /** Subtracted when an orchestrator's report points at an earlier agent step. */
  reportedByOrchestrator: 0.1,
  lastAgentStep: 0.3,
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

/**
 * The consumer's ordering key, the processor, the prompt builder and the offline generator all
 * ask where one event failed; the scan is linear but a trace may hold hundreds of kilobytes, so
 * each event (contracts are never mutated) is scanned once.
 */
const locatedByEvent = new WeakMap<TaskCompleted, LocatedFailure>();

/** Finds the step a failure is attributed to, and on what basis. Works for any outcome. */
export function locateFailure(event: TaskCompleted): LocatedFailure {
  let located = locatedByEvent.get(event);
  if (!located) {
    located = locate(event);
    locatedByEvent.set(event, located);
  }
  return located;
}

function locate(event: TaskCompleted): LocatedFailure {
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
  const errorStep = steps[errorIndex];
  if (errorStep) {
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
  }

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
  const messageNeedle = needleOf(event.error?.message);
  const byMessage = messageNeedle ? findPhrase(messageNeedle) : null;
  if (byMessage) {
    return located(
      "message_match",
      byMessage.index,
      attributionAt(steps, byMessage.index, attributionConfidence.messageMatch, byMessage.quote),
    );
  }

  // 3. A claim verification refuted or could not verify, where it was first stated.
  // A bounded number of claims, so 500 of them cannot multiply the scan of a long trace.
  for (const result of (event.verificationResults ?? []).slice(0, maxClaimsSearched)) {
    if (result.status === "verified") continue;
    const needle = needleOf(result.claimText);
    const byClaim = needle ? findPhrase(needle) : null;
    if (byClaim) {
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
  }

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
  ) => {
    for (const i of searchable) {
      if (i >= before) break;
      const found = firstCue(lower(i), cues);
      if (!found) continue;
      const step = steps[i];
      const quote = quoteAround(step?.content ?? "", found.at);
      const agent = roleOf(step?.actor) === "orchestrator" ? lastAgentStepBefore(i) : -1;
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

  // 4. A guess, an assumption, giving up — or an empty tool response, whichever comes first.
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

  // 5. Text that reports a failure.
  const failure = byCue(failureCues, "failure_text", attributionConfidence.failureText);
  if (failure) return failure;

  // A worked-around error is still a better guess than repetition or the last step.
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

  // 6. The first step the same agent then repeated word for word.
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

  // 7. A guess: the last substantive agent step before the final answer.
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
