import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { isErrorStep } from "./explicit-errors.js";
import { callBefore, roleOf } from "./trace-view.js";

/**
 * Rules that ignore what the trace says: where a failure "always" is and who "always" did it. They
 * are the yardstick every attribution rule is measured against (a rule that does not beat them on
 * runs it was not fitted to has not earned its place), and the general attribution falls back to
 * the one that measured best when no kind of evidence in the trace is more precise than it.
 */
export type StepBaseline = "last_event" | "first_error_event" | "first_agent_message" | "last_agent_message";
export type AgentBaseline =
  "most_common_agent" | "most_common_worker" | "first_agent_to_speak" | "last_agent_to_speak";

export const stepBaselines: readonly StepBaseline[] = [
  "last_event",
  "first_error_event",
  "first_agent_message",
  "last_agent_message",
];
export const agentBaselines: readonly AgentBaseline[] = [
  "most_common_agent",
  "most_common_worker",
  "first_agent_to_speak",
  "last_agent_to_speak",
];

/** Text that reports a failure in its own words: the plainest reading of "an error happened here". */
const failureWords = /\b(?:error|exception|traceback|failed|failure)\b/i;

/**
 * A step an agent took (not the user's, not a tool's output or an error event): a message or a
 * tool call. Tool outputs are what the environment returned; the agent that called the tool is
 * the one responsible for what it did with them.
 */
export function isAgentStep(step: TraceEvent | undefined): boolean {
  if (
    step === undefined ||
    step.type === "tool_response" ||
    step.type === "error_event" ||
    step.type === "system_event"
  )
    return false;
  return roleOf(step.actor) !== "user";
}

/**
 * The agent responsible for step `index`: its own actor; for a tool's output, the agent whose call
 * led to it when the trace holds that call, else the actor the output names when that actor acts as
 * an agent elsewhere in the trace, else the last agent before it — never the tool or its environment.
 */
export function responsibleAgent(steps: readonly TraceEvent[], index: number): string | undefined {
  const step = steps[index];
  if (!step) return undefined;
  if (isAgentStep(step)) return step.actor;
  const caller = callBefore(steps, index);
  if (caller?.actor !== undefined) return caller.actor;
  const named = step.actor;
  if (
    named !== undefined &&
    named !== step.toolName &&
    steps.some((s) => isAgentStep(s) && s.actor === named)
  )
    return named;
  for (let i = index - 1; i >= 0; i -= 1) {
    const before = steps[i];
    if (isAgentStep(before) && before?.actor !== undefined) return before.actor;
  }
  return undefined;
}

/** The step a baseline names (always defined for a non-empty trace). */
export function baselineStep(event: TaskCompleted, rule: StepBaseline): number | undefined {
  const steps = event.events;
  if (steps.length === 0) return undefined;
  const last = steps.length - 1;
  switch (rule) {
    case "last_event":
      return last;
    case "first_error_event": {
      const i = steps.findIndex((s) => isErrorStep(s) || failureWords.test(s.content.slice(0, 4000)));
      return i >= 0 ? i : last;
    }
    case "first_agent_message": {
      const i = steps.findIndex((s) => isAgentStep(s));
      return i >= 0 ? i : 0;
    }
    case "last_agent_message": {
      for (let i = last; i >= 0; i -= 1) if (isAgentStep(steps[i])) return i;
      return last;
    }
  }
}

/** The agent a baseline names, if the trace names any agent at all. */
export function baselineAgent(event: TaskCompleted, rule: AgentBaseline): string | undefined {
  const agents = event.events.flatMap((s) => (isAgentStep(s) && s.actor !== undefined ? [s.actor] : []));
  if (agents.length === 0) return undefined;
  switch (rule) {
    case "first_agent_to_speak":
      return agents[0];
    case "last_agent_to_speak":
      return agents[agents.length - 1];
    case "most_common_worker":
      // The agent that did most of the work: orchestrators and managers only direct it.
      return mostCommon(agents.filter((a) => roleOf(a) === "agent")) ?? mostCommon(agents);
    case "most_common_agent":
      return mostCommon(agents);
  }
}

/** The most frequent name; ties go to the one that reached the count first (the earlier speaker). */
function mostCommon(agents: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  let best: string | undefined;
  let bestCount = 0;
  for (const a of agents) {
    const n = (counts.get(a) ?? 0) + 1;
    counts.set(a, n);
    if (n > bestCount) {
      best = a;
      bestCount = n;
    }
  }
  return best;
}
