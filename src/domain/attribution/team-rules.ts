import type { TraceEvent } from "../contracts/index.js";
import { attributionConfidence } from "./attribution-confidence.js";
import { locatedAt, type LocatedFailure } from "./located-failure.js";
import { isSubstantive, squeeze } from "./trace-scan.js";
import { roleOf } from "./trace-view.js";

/**
 * Where a wrong outcome was set in motion, read from the shape of the run when no step says what
 * went wrong. Learnt from public annotated failure logs (bench/attribution.ts), where the textual
 * cues of cue-rules.ts mostly point at a later symptom: annotators name the earliest step
 * whose correction would have changed the outcome, and in real runs that is, far more often than
 * any cue, the step that first committed the run to its path.
 *
 * - A tool-using agent that ends in the wrong state committed it with its first call that changed
 *   state (a booking, a cancellation, an update); the reads before it changed nothing.
 * - A team that answers by running code set its approach in the first message that held code: the
 *   data it assumed, the method it chose; later steps ran and verified that code.
 * - A team an orchestrator directs: the first step of an agent that does the work (the first
 *   search, the first page opened) chose the direction the rest followed.
 *
 * Each is one pass over the steps; a tool name or a step's text is only scanned with `startsWith`
 * and `includes`.
 */

/** Verbs that open the name of a tool that changes something (`book_reservation`, `cancel_order`). */
const writeVerbs = [
  "add",
  "approve",
  "assign",
  "book",
  "buy",
  "cancel",
  "change",
  "charge",
  "close",
  "create",
  "delete",
  "exchange",
  "insert",
  "modify",
  "move",
  "order",
  "pay",
  "post",
  "purchase",
  "refund",
  "remove",
  "reserve",
  "return",
  "send",
  "set",
  "submit",
  "transfer",
  "update",
  "upsert",
  "write",
];

/** Whether a tool's name says it changes state: it starts with a write verb (`update_x`, `sendEmail`). */
export function isWriteTool(name: string | undefined): boolean {
  if (name === undefined) return false;
  const lower = name.toLowerCase();
  return writeVerbs.some((verb) => {
    if (!lower.startsWith(verb)) return false;
    const next = name.charCodeAt(verb.length);
    // `update_reservation`, `update-x`, `updateReservation`, or the bare verb; not `settings`.
    return Number.isNaN(next) || next === 95 || next === 45 || (next >= 65 && next <= 90);
  });
}

/** The first tool call that changes state, or -1. */
export function firstStateChange(steps: readonly TraceEvent[]): number {
  return steps.findIndex((s) => s.type === "tool_call" && isWriteTool(s.toolName));
}

const executorWords = ["terminal", "executor", "interpreter", "sandbox"];

function isExecutor(step: TraceEvent): boolean {
  const actor = step.actor?.toLowerCase() ?? "";
  return step.type === "tool_response" || executorWords.some((w) => actor.includes(w));
}

/**
 * In a team whose work is code that a terminal runs (an AutoGen group chat): the first step of an
 * agent that holds a fenced code block, or -1 when the run executed no code.
 */
export function firstCodeStep(steps: readonly TraceEvent[]): number {
  if (!steps.some((s) => isExecutor(s) && s.type === "tool_response")) return -1;
  return steps.findIndex((s) => !isExecutor(s) && s.content.includes("```"));
}

/**
 * In a team with an orchestrator (Magentic-One): the first substantive step of an agent that is
 * neither the orchestrator nor the user, or -1 when there is no orchestrator or no such step.
 */
export function firstWorkerStep(
  steps: readonly TraceEvent[],
  roleOf: (actor: string | undefined) => "orchestrator" | "user" | "agent",
): number {
  if (!steps.some((s) => roleOf(s.actor) === "orchestrator")) return -1;
  return steps.findIndex(
    (s, i) =>
      i > 0 && s.actor !== undefined && roleOf(s.actor) === "agent" && !isExecutor(s) && isSubstantive(s),
  );
}

/** Rule 4a's first part: where a tool-using agent committed the run to its path. */
export function stateChangeFailure(steps: readonly TraceEvent[]): LocatedFailure | null {
  const i = firstStateChange(steps);
  if (i < 0) return null;
  return locatedAt(
    steps,
    "first_state_change",
    i,
    attributionConfidence.firstStateChange,
    squeeze(steps[i]?.content ?? ""),
  );
}

/** Rule 4a's team shapes: a coding team's first code, else an orchestrated team's first worker step. */
export function teamShapeFailure(steps: readonly TraceEvent[]): LocatedFailure | null {
  const code = firstCodeStep(steps);
  if (code >= 0)
    return locatedAt(
      steps,
      "first_code",
      code,
      attributionConfidence.firstCode,
      squeeze(steps[code]?.content ?? ""),
    );
  const worker = firstWorkerStep(steps, roleOf);
  if (worker >= 0)
    return locatedAt(
      steps,
      "first_worker_step",
      worker,
      attributionConfidence.firstWorkerStep,
      squeeze(steps[worker]?.content ?? ""),
    );
  return null;
}
