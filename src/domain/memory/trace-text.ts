import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { maskVolatileTokens } from "../mask-volatile-tokens.js";
import { isLowInformationMessage } from "./low-information.js";

const clip = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** How a step reads in a trace text: who did it, with which tool, and what it said. */
export function stepLine(step: TraceEvent, maxChars: number): string {
  const who = [step.actor, step.toolName].filter(Boolean).join(" / ");
  const error = step.error ? [step.error.code, step.error.message].filter(Boolean).join(" ") : "";
  const body = oneLine(clip(error ? `${error} ${step.content}` : step.content, maxChars * 2));
  return clip(`${who ? `${who}: ` : ""}${body}`, maxChars);
}

/**
 * What a trace is about, for comparing traces by meaning: the task, the step where it went wrong
 * and the error. A stored lesson is reused for a new trace only when their trace texts are close.
 * Sentence-embedding models read the first few hundred tokens, so each part is kept short and the
 * task comes first; a generic error message adds nothing and is left out.
 */
export function traceText(event: TaskCompleted, failingStep: TraceEvent | undefined): string {
  const parts = [clip(oneLine(event.task.description), 600)];
  if (failingStep) parts.push(stepLine(failingStep, 500));
  if (event.error && !isLowInformationMessage(event.error.message))
    parts.push(clip(oneLine(event.error.message), 200));
  // Ids, numbers and timestamps differ between two occurrences of one failure and mean nothing
  // here; masked, a recurrence has the very same text (and its vector can be remembered).
  return maskVolatileTokens(parts.join("\n"));
}

/**
 * One processed task as the tenant's episodic memory keeps it, for pattern evidence and search:
 * the task, its outcome and error (category, type, code, message), the agents and tools that
 * took part, and the failing step. A pattern such as "timeout on postgres_query" is evidenced by
 * episodes that name the tool and the error, so those must be in the text.
 */
export function episodeText(event: TaskCompleted, failingStep: TraceEvent | undefined): string {
  const actors = [...new Set(event.events.map((e) => e.actor).filter(Boolean))];
  const tools = [...new Set(event.events.map((e) => e.toolName).filter(Boolean))];
  const errorSteps = event.events.filter((e) => e.type === "error_event" || e.error);
  const parts = [
    event.task.description,
    event.task.goal,
    `outcome: ${event.outcome}`,
    event.error
      ? `error: ${[event.error.category, event.error.type, event.error.code, event.error.message].filter(Boolean).join(" ")}`
      : undefined,
    actors.length ? `agents: ${actors.join(", ")}` : undefined,
    tools.length ? `tools: ${tools.join(", ")}` : undefined,
    failingStep ? `failing step: ${stepLine(failingStep, 600)}` : undefined,
    ...errorSteps.filter((e) => e !== failingStep).map((e) => stepLine(e, 300)),
  ];
  return clip(parts.filter(Boolean).join("\n"), 8000);
}

/**
 * What the task was and where it failed: the "task" side of relevance. The failing step
 * is there because a good analysis of a wrong answer is about that step, not only the question.
 */
export function taskText(event: TaskCompleted, failingStep: TraceEvent | undefined): string {
  const failures = event.events.filter((e) => e !== failingStep && (e.type === "error_event" || e.error));
  return clip(
    [
      event.task.description,
      event.task.goal,
      event.task.query,
      event.error?.message,
      failingStep ? stepLine(failingStep, 1000) : undefined,
      ...failures.map((e) => stepLine(e, 500)),
    ]
      .filter(Boolean)
      .join("\n"),
    8000,
  );
}
