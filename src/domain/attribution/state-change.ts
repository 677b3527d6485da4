import type { TraceEvent } from "../contracts/index.js";
import { attributionConfidence } from "./attribution-confidence.js";
import { locatedAt, type LocatedFailure } from "./located-failure.js";
import { squeeze } from "./trace-scan.js";

/**
 * Where a tool-using agent that ended in the wrong state committed it: its first call that changed
 * state (a booking, a cancellation, an update); the reads before it changed nothing. The one rule
 * about a run's shape that named the annotated step better than a rule ignoring the trace on a
 * source it was not fitted to (bench/generalisation.ts). One pass; a tool's name is only matched
 * with `startsWith`.
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

/** Where a tool-using agent committed the run to its path: its first call that changed state. */
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
