import type { TraceEvent } from "../contracts/index.js";
import { attributionConfidence } from "./attribution-confidence.js";
import { locatedAt, type LocatedFailure } from "./located-failure.js";
import { evidenceMaxChars, squeeze } from "./trace-scan.js";
import { callBefore } from "./trace-view.js";

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

/** Where a trace's explicit failures are: -1 where there is none. */
export interface ErrorScan {
  /** The first error step the trace never recovered from. */
  errorIndex: number;
  /** The first error step the trace later worked around. */
  firstRecovered: number;
}

/**
 * Finds the explicit failures. An error followed by a success of the same tool (or, without a
 * tool, of the same agent's same kind of step) was worked around: a 403 on one page before the
 * right page opened is not where the task went wrong. One backward pass keeps this linear.
 */
export function scanErrors(steps: readonly TraceEvent[]): ErrorScan {
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
  return { errorIndex, firstRecovered };
}

/** Rule 1: the explicit failure the trace never recovered from. */
export function explicitFailure(steps: readonly TraceEvent[], scan: ErrorScan): LocatedFailure | null {
  const { errorIndex } = scan;
  const errorStep = steps[errorIndex];
  if (!errorStep) return null;
  const call = callBefore(steps, errorIndex);
  const tool = errorStep.toolName ?? call?.toolName;
  const message = errorStep.error?.message ?? errorStep.content;
  return locatedAt(
    steps,
    "explicit_error",
    errorIndex,
    tool !== undefined ? attributionConfidence.explicitErrorWithTool : attributionConfidence.explicitError,
    squeeze(message || `${errorStep.type} with an error status`),
    call,
  );
}

/** Rule 8: a worked-around error, still a better guess than repetition or the last step. */
export function recoveredFailure(steps: readonly TraceEvent[], scan: ErrorScan): LocatedFailure | null {
  const { firstRecovered } = scan;
  const recovered = steps[firstRecovered];
  if (!recovered) return null;
  return locatedAt(
    steps,
    "explicit_error",
    firstRecovered,
    attributionConfidence.recoveredError,
    `worked around later: ${squeeze(recovered.error?.message ?? recovered.content, evidenceMaxChars - 20)}`,
    callBefore(steps, firstRecovered),
  );
}
