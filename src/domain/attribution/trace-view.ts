import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { isSubstantive, normalise } from "./trace-scan.js";

/**
 * One failed trace as the attribution rules read it. A step's lower-cased and whitespace-collapsed
 * texts are computed at most once per trace, however many rules look at them: a step may be a
 * megabyte of untrusted text.
 */
export interface TraceView {
  event: TaskCompleted;
  steps: readonly TraceEvent[];
  /** The index of the final step (the answer). */
  last: number;
  /** The steps cues are searched in, in order: the agents' steps, not the final answer, the user's or the system prompt. */
  searchable: readonly number[];
  /** Step `i`'s text, lower-cased ("" past the end). */
  lower: (i: number) => string;
  /** Step `i`'s text, lower-cased with whitespace collapsed (`normalise`). */
  flat: (i: number) => string;
}

export function createTraceView(event: TaskCompleted): TraceView {
  const steps = event.events;
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
  const last = steps.length - 1;
  const searchable: number[] = [];
  for (let i = 0; i < (last > 0 ? last : 1); i += 1) {
    // The user's messages and the system prompt are what the agents were given, not what they did.
    if (roleOf(steps[i]?.actor) !== "user" && steps[i]?.type !== "system_event") searchable.push(i);
  }
  return { event, steps, last, searchable, lower, flat };
}

export type Role = "orchestrator" | "user" | "agent";

/** Orchestrators and managers coordinate; humans and users ask. Anyone else does the work. */
export function roleOf(actor: string | undefined): Role {
  if (actor === undefined) return "agent";
  const lower = actor.toLowerCase();
  if (lower.includes("orchestrat") || lower.includes("manager")) return "orchestrator";
  if (lower.includes("human") || lower === "user") return "user";
  return "agent";
}

/** A tool's output (or an error event): what the environment returned, not what an agent said. */
export function isToolOutput(step: TraceEvent | undefined): boolean {
  return step?.type === "tool_response" || step?.type === "error_event";
}

/** The call that led to step `index`: the last tool call before it, of the same tool if it names one. */
export function callBefore(steps: readonly TraceEvent[], index: number): TraceEvent | undefined {
  const tool = steps[index]?.toolName;
  for (let i = index - 1; i >= 0; i -= 1) {
    const s = steps[i];
    if (s?.type === "tool_call" && (tool === undefined || s.toolName === tool)) return s;
  }
  return undefined;
}

/** The last substantive step of a non-orchestrator agent before `index`, or -1. */
export function lastAgentStepBefore(steps: readonly TraceEvent[], index: number): number {
  for (let i = index - 1; i >= 0; i -= 1) {
    const s = steps[i];
    if (s && roleOf(s.actor) === "agent" && isSubstantive(s)) return i;
  }
  return -1;
}
