import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { leavesOf, parseArguments, userActor } from "../heuristic/argument-sources.js";

/** An account, booking or order id as people type it: letters and digits, five or more characters. */
const identifierPattern =
  /(?<![\p{L}\p{N}_])(?=[\p{L}\p{N}_]*\p{N})(?=[\p{L}\p{N}_]*\p{L})[\p{L}\p{N}_]{5,}(?![\p{L}\p{N}_])/gu;

/**
 * What a failing tool call did, as memory compares recurrences: the tool, the shape of its
 * arguments (their paths, not their values) and whose request it served — the identifiers the
 * user gave before the call (their account, booking or order ids). The values the agent put in
 * the call are left out: they are where one mistake's occurrences differ, and the wording of the
 * request is too (a user says the same thing differently each time). Two failures with the same
 * key made the same kind of call for the same request; two tasks that only share a tool do not.
 * Null when the step is not a call with structured arguments.
 */
export function actionKey(event: TaskCompleted, failingStep: TraceEvent | undefined): string | null {
  if (failingStep?.type !== "tool_call" || !failingStep.toolName) return null;
  const args = parseArguments(failingStep.content);
  if (!args || typeof args !== "object") return null;
  const index = event.events.indexOf(failingStep);
  const userText = event.events
    .slice(0, index < 0 ? event.events.length : index)
    .filter((e) => e.actor && userActor.test(e.actor))
    .map((e) => e.content)
    .join("\n");
  const shape = [...new Set(leavesOf(args).map((l) => l.path))].sort().join(",");
  const ids = [...new Set((userText.match(identifierPattern) ?? []).map((id) => id.toLowerCase()))].sort();
  return `${failingStep.toolName}(${shape})${ids.length ? ` for ${ids.join(", ")}` : ""}`;
}

/**
 * Whether two action keys are one mistake: the same kind of call (tool and argument shape) for
 * the same user — their identifiers overlap (a user names a second booking one time and not
 * the next). Keys that name no identifier agree on the call alone.
 */
export function sameAction(a: string, b: string): boolean {
  const x = parseAction(a);
  const y = parseAction(b);
  if (x.call !== y.call) return false;
  if (x.ids.length === 0 || y.ids.length === 0) return true;
  return x.ids.some((id) => y.ids.includes(id));
}

/**
 * Whether two action keys are the same call for the same request, known to be: both name the
 * user's identifiers and they overlap. Keys without identifiers may be anyone's request.
 */
export function sameRequest(a: string, b: string): boolean {
  const x = parseAction(a);
  const y = parseAction(b);
  return x.call === y.call && x.ids.length > 0 && x.ids.some((id) => y.ids.includes(id));
}

function parseAction(key: string): { call: string; ids: string[] } {
  const at = key.indexOf(") for ");
  return at < 0 ? { call: key, ids: [] } : { call: key.slice(0, at + 1), ids: key.slice(at + 6).split(", ") };
}
