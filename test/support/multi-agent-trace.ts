import { randomUUID } from "node:crypto";
import type { TaskCompleted, TraceEvent } from "../../src/domain/contracts/index.js";

/**
 * A real-sized multi-agent trace of a web-browsing task that ended with a wrong answer: an
 * Orchestrator directing WebSurfer, Computer_terminal and Assistant over `steps` steps, one of
 * them a page dump of `bigStepChars` characters, about `totalChars` characters in all. No step
 * reports an error; the WebSurfer step at `cueStep` gives up on the source and guesses, which is
 * where the trace went wrong. Filler text avoids every attribution cue, so that step is the only one.
 */
export interface MultiAgentTraceOptions {
  steps?: number;
  bigStep?: number;
  bigStepChars?: number;
  totalChars?: number;
  cueStep?: number;
  overrides?: Partial<TaskCompleted>;
}

export const actors = ["Orchestrator", "WebSurfer", "Computer_terminal", "Assistant"] as const;

const filler = [
  "The page lists the quarterly figures of the museum's visitor survey by region and year.",
  "Navigating to the archive section and scrolling through the table of contents.",
  "The table shows columns for the year, the region, the visitor count and the source.",
  "Running the script to parse the downloaded table into rows and print the totals.",
  "Plan: open the statistics office site, locate the 2019 report, read the visitor count.",
  "Clicking the link titled Annual Report and waiting for the document viewer to load.",
];

function text(seed: number, chars: number): string {
  let out = "";
  for (let i = seed; out.length < chars; i += 1) out += `${filler[i % filler.length] ?? ""} `;
  return out.slice(0, chars);
}

export const cueText =
  "I could not find the 2019 visitor count in the report; I'll guess it is 42,000 based on the 2018 figure.";

export function multiAgentTrace(options: MultiAgentTraceOptions = {}): TaskCompleted {
  const steps = options.steps ?? 130;
  const bigStep = options.bigStep ?? 40;
  const bigStepChars = options.bigStepChars ?? 80_000;
  const totalChars = options.totalChars ?? 340_000;
  const cueStep = options.cueStep ?? 61;
  const perStep = Math.max(200, Math.floor((totalChars - bigStepChars) / (steps - 1)));
  const id = randomUUID().slice(0, 8);
  const events: TraceEvent[] = Array.from({ length: steps }, (_, i) => {
    const actor = i === steps - 1 ? "Orchestrator" : (actors[i % actors.length] ?? "Orchestrator");
    const at = new Date(Date.UTC(2026, 10, 20, 10, 0, i)).toISOString();
    const base = { eventId: `step-${String(i)}`, timestamp: at, actor };
    if (i === steps - 1)
      return { ...base, type: "llm_response", content: "FINAL ANSWER: 42,000 visitors in 2019." };
    if (i === cueStep)
      return {
        ...base,
        actor: "WebSurfer",
        type: "tool_response",
        toolName: "web_browser",
        content: `${text(i, perStep - cueText.length - 1)} ${cueText}`,
      };
    if (i === bigStep)
      return {
        ...base,
        actor: "WebSurfer",
        type: "tool_response",
        toolName: "web_browser",
        content: text(i, bigStepChars),
      };
    if (actor === "WebSurfer")
      return { ...base, type: "tool_response", toolName: "web_browser", content: text(i, perStep) };
    if (actor === "Computer_terminal")
      return { ...base, type: "tool_response", toolName: "terminal", content: text(i, perStep) };
    return { ...base, type: "llm_response", content: text(i, perStep) };
  });
  return {
    schemaVersion: 1,
    eventId: `evt-${id}`,
    tenantId: "tenant-a",
    projectId: "web-tasks",
    agentId: "magentic-one",
    taskId: `task-${id}`,
    loopId: `loop-${id}`,
    occurredAt: "2026-11-20T10:03:00.000Z",
    task: {
      description: "How many people visited the city museum in 2019, according to the statistics office?",
      query: "How many people visited the city museum in 2019?",
      answer: "42,000",
    },
    outcome: "failure",
    error: { category: "wrong_answer", message: "the final answer was judged incorrect" },
    events,
    ...options.overrides,
  };
}
