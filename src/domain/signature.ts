import { createHash } from "node:crypto";
import type { TaskCompleted, TraceEvent } from "./contracts/index.js";
import { findingFromEvaluation } from "./evaluation/reflection-from-evaluation.js";
import { isLowInformationMessage } from "./memory/low-information.js";
import { failingStepOf } from "./memory/failing-step.js";
import { maskVolatileTokens } from "./mask-volatile-tokens.js";
import { stepLine } from "./memory/trace-text.js";
import { actionKey } from "./memory/action-key.js";

export { maskVolatileTokens };

// node:crypto is the one non-zod import in the domain: hashing is deterministic and pure.

/**
 * First 16 hex chars of sha256(`error_type:normalized content`), content lower-cased and trimmed
 * (docs/specification.md#signatures).
 */
export function computeErrorSignature(errorType: string, content: string): string {
  const key = `${errorType}:${content.toLowerCase().trim()}`;
  return createHash("sha256").update(key, "utf8").digest("hex").slice(0, 16);
}

export interface SignatureInput {
  errorType: string;
  content: string;
  /** What the signature rests on: the reported error, the evaluator's finding, a failed step, or the task. */
  source: "error" | "evaluation" | "trace" | "task";
}

/**
 * What a task's signature is computed from, before any LLM call. A reported error wins; then
 * the evaluator's finding (conflict, unverified claim, factual error, quality gain);
 * then the last failed step; successes and bare failures fall back to the task itself.
 */
export function signatureInputFor(event: TaskCompleted): SignatureInput {
  if (event.error) {
    return {
      errorType: event.error.type ?? event.error.category,
      content: maskVolatileTokens(`${event.error.code ?? ""} ${event.error.message}`),
      source: "error",
    };
  }
  const finding = findingFromEvaluation(event);
  if (finding)
    return {
      errorType: finding.errorType,
      content: maskVolatileTokens(finding.content),
      source: "evaluation",
    };
  const lastError = event.events.findLast((e) => e.type === "error_event" || e.error !== undefined);
  if (event.outcome !== "success" && lastError) {
    const message = lastError.error?.message ?? lastError.content;
    return {
      errorType: lastError.error?.code ?? event.outcome,
      content: maskVolatileTokens(`${lastError.toolName ?? ""} ${message}`),
      source: "trace",
    };
  }
  return { errorType: event.outcome, content: maskVolatileTokens(event.task.description), source: "task" };
}

export interface SignatureCandidate extends SignatureInput {
  signature: string;
  /** How specific the content is: the reported error, the failing step, or the task itself. */
  level: "message" | "step" | "task";
}

/**
 * The signatures an event may be filed under, most general first. A signature says "the same
 * error", not "the same cause": when the lesson stored under one does not fit the trace, the
 * next, more specific one is tried, so different root causes of one error get lessons of their
 * own. A message that says only that the task failed is skipped: it cannot tell causes apart.
 * Every level uses the same formula over its own content.
 */
export function signatureCandidates(
  event: TaskCompleted,
  failingStep: TraceEvent | undefined,
): SignatureCandidate[] {
  const primary = signatureInputFor(event);
  const lowInformation = primary.source === "error" && isLowInformationMessage(primary.content);
  // A failing call is filed by what it did for which request; any other step by what it says.
  const action = actionKey(event, failingStep);
  const step = action ?? (failingStep ? maskVolatileTokens(stepLine(failingStep, 200)) : "");
  const task = maskVolatileTokens(event.task.description.slice(0, 400));
  const levels: Omit<SignatureCandidate, "signature">[] = [];
  if (!lowInformation) levels.push({ ...primary, level: "message" });
  if (step) levels.push({ ...primary, content: `${primary.content} | ${step}`, level: "step" });
  levels.push({ ...primary, content: `${primary.content} | ${step} | ${task}`, level: "task" });
  const seen = new Set<string>();
  return levels
    .map((l) => ({ ...l, signature: computeErrorSignature(l.errorType, l.content) }))
    .filter((c) => (seen.has(c.signature) ? false : (seen.add(c.signature), true)));
}

/** The first signature an event is filed under; the consumer orders work on the same one. */
export function signatureFor(event: TaskCompleted): string {
  const [first] = signatureCandidates(event, failingStepOf(event));
  return first ? first.signature : computeErrorSignature(event.outcome, event.task.description);
}
