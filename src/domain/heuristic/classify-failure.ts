import { locateFailure } from "../attribution/attribute-failure.js";
import { isErrorStep, statusOf } from "../attribution/explicit-errors.js";
import type { LocatedFailure } from "../attribution/located-failure.js";
import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { findingFromEvaluation } from "../evaluation/reflection-from-evaluation.js";

export type FailureKind =
  | "timeout"
  | "rate_limit"
  | "auth"
  | "validation"
  | "network"
  | "not_found"
  | "resource_exhausted"
  | "parse_error"
  | "conflicting_claim"
  | "unverified_claim"
  | "wrong_choice"
  | "quality"
  | "tool_error"
  | "unknown";

export interface FailureAnalysis {
  kind: FailureKind;
  /** The trace facts the classification rests on, quoted. */
  evidence: string[];
  /** The step that failed explicitly (an error event, an `error`, an error status), if any. */
  failingStep: TraceEvent | undefined;
  /** The call that led to the failing step (same tool, just before it), if any. */
  precedingStep: TraceEvent | undefined;
  tool: string | undefined;
  /** Numbers read from the trace, for the lesson. */
  numbers: { timeoutMs?: number; retryAfterS?: number; rows?: number; attempts: number; status?: number };
  /**
   * Where the failure is attributed, and on what basis. When the trace has an explicit failing
   * step, it is that step; otherwise the attribution's weaker rules name one (see
   * attribute-failure.ts).
   */
  located: LocatedFailure;
}

// Order matters: the first family whose pattern matches the error text wins.
const families: [FailureKind, RegExp][] = [
  ["rate_limit", /\b429\b|rate.?limit|too many requests|retry-after/i],
  [
    "auth",
    /\b40[13]\b|unauthori[sz]ed|forbidden|expired (access )?token|invalid_grant|permission denied|invalid api key/i,
  ],
  [
    "timeout",
    /timeout|timed out|etimedout|deadline exceeded|exceeded .{0,200}limit|\b50[4]\b|\b408\b|statement timeout/i,
  ],
  [
    "network",
    /econnreset|econnrefused|socket hang up|eai_again|enotfound|ehostunreach|connection (reset|refused)/i,
  ],
  [
    "resource_exhausted",
    /out of memory|\boom\b|disk[ _]full|no space left|context length|maximum context|token limit|quota exceeded/i,
  ],
  ["not_found", /\b404\b|not found|no such|does not exist/i],
  ["parse_error", /unexpected token|json\.?parse|could not parse|parse error|syntax error/i],
  ["validation", /\b(400|422)\b|invalid|validation|must be|schema|malformed|unprocessable|required field/i],
];

const categoryKinds: Record<string, FailureKind> = {
  timeout_error: "timeout",
  rate_limit_error: "rate_limit",
  auth_error: "auth",
  validation_error: "validation",
  network_error: "network",
  wrong_choice: "wrong_choice",
  quality_error: "quality",
  factual_error: "conflicting_claim",
  tool_error: "tool_error",
};

function firstNumber(text: string, re: RegExp): number | undefined {
  const match = re.exec(text);
  return match?.[1] ? Number(match[1]) : undefined;
}

function readNumbers(
  event: TaskCompleted,
  text: string,
  failing: TraceEvent | undefined,
  tool: string | undefined,
) {
  const numbers: FailureAnalysis["numbers"] = {
    attempts: event.events.filter(
      (e) => e.type === "tool_call" && (tool === undefined || e.toolName === tool),
    ).length,
  };
  const metaTimeout = [...event.events]
    .reverse()
    .map((e) => e.metadata?.timeout_ms)
    .find((v) => typeof v === "number");
  // A number starts only after a non-digit: without the look-behind every digit of a long run
  // would start a new match attempt over the rest of the run (quadratic on untrusted text).
  const seconds = firstNumber(text, /(?<![\d.])(\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds)\b/i);
  const millis = firstNumber(text, /(?<!\d)(\d+)\s*ms\b/i);
  numbers.timeoutMs =
    typeof metaTimeout === "number"
      ? metaTimeout
      : (millis ?? (seconds !== undefined ? Math.round(seconds * 1000) : undefined));
  const retryAfter =
    firstNumber(text, /retry-after:?\s*(\d+)/i) ??
    event.events
      .map((e) => e.metadata?.retry_after ?? e.metadata?.retry_after_s)
      .find((v) => typeof v === "number");
  if (typeof retryAfter === "number") numbers.retryAfterS = retryAfter;
  const rows = event.error?.context?.rows_estimated ?? event.error?.context?.rows;
  if (typeof rows === "number") numbers.rows = rows;
  const status = failing ? statusOf(failing) : undefined;
  if (status !== undefined) numbers.status = status;
  return numbers;
}

/** Reads the trace and says what kind of failure it was, where, and on what evidence. */
export function classifyFailure(
  event: TaskCompleted,
  located: LocatedFailure = locateFailure(event),
): FailureAnalysis {
  // One definition of "the failing step" for the lesson and the attribution.
  const failingIndex = located.basis === "explicit_error" ? (located.stepIndex ?? -1) : -1;
  const failingStep = failingIndex >= 0 ? event.events[failingIndex] : undefined;
  const tool = failingStep?.toolName ?? event.events.findLast((e) => e.toolName)?.toolName;
  const precedingStep =
    failingIndex > 0
      ? event.events
          .slice(0, failingIndex)
          .findLast((e) => e.type === "tool_call" && (!tool || e.toolName === tool))
      : undefined;

  const errorText = [event.error?.code, event.error?.type, event.error?.message].filter(Boolean).join(" ");
  const traceText = event.events
    .filter(isErrorStep)
    .map((e) => [e.error?.code, e.error?.message, e.content].filter(Boolean).join(" "))
    .join(" ");
  const text = `${errorText} ${traceText}`;
  const evidence: string[] = [];
  if (event.error)
    evidence.push(
      `error ${event.error.category}${event.error.code ? ` (${event.error.code})` : ""}: ${event.error.message}`,
    );
  if (failingStep)
    evidence.push(
      `step ${failingStep.eventId} (${failingStep.type}${failingStep.toolName ? ` ${failingStep.toolName}` : ""}): ${failingStep.content.slice(0, 200)}`,
    );

  const verification = event.verificationResults ?? [];
  const conflicts = verification.filter((v) => v.status === "conflict" || v.status === "refuted");
  const unverified = verification.filter((v) => v.status === "unverified");
  let kind: FailureKind | undefined;
  if (conflicts.length > 0) {
    kind = "conflicting_claim";
    for (const c of conflicts) evidence.push(`conflict: ${c.conflictReason ?? c.claimText ?? "unspecified"}`);
  } else if (unverified.length > 0 && !event.error) {
    kind = "unverified_claim";
  }
  for (const u of unverified) evidence.push(`unverified claim: ${u.claimText ?? "unspecified"}`);

  // The agent's own evaluator may have found what the trace does not show.
  const finding = findingFromEvaluation(event);
  if (!kind && finding?.errorType === "factual_error") {
    kind = "conflicting_claim";
    evidence.push(`evaluator: ${finding.content.slice(0, 200)}`);
  }
  kind ??= families.find(([, re]) => re.test(text))?.[0];
  kind ??= event.error ? categoryKinds[event.error.category] : undefined;
  if (!kind && finding?.errorType === "quality_improvement") {
    kind = "quality";
    evidence.push(`evaluator: ${finding.content.slice(0, 200)}`);
  }
  const alignment = event.scores?.alignment;
  if (!kind && alignment !== undefined && alignment < 0.75)
    kind = event.task.goal ? "wrong_choice" : "quality";
  if (kind === undefined && failingStep?.toolName) kind = "tool_error";
  kind ??= "unknown";
  // Categories the agent set itself outrank a lexical guess of "validation" ("invalid" is everywhere).
  const declared = event.error ? categoryKinds[event.error.category] : undefined;
  if (declared && (kind === "validation" || kind === "tool_error") && declared !== "tool_error")
    kind = declared;
  if (event.scores?.alignment !== undefined)
    evidence.push(`alignment ${event.scores.alignment}, drift ${event.scores.drift ?? "n/a"}`);

  return {
    kind,
    evidence,
    failingStep,
    precedingStep,
    tool,
    numbers: readNumbers(event, text, failingStep, tool),
    located,
  };
}
