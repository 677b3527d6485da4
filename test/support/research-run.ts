import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { taskEvent } from "./task-events.js";

/**
 * A small web-research team's failed run, in the shape of the public multi-agent logs: WebSurfer
 * downloads the wrong World Bank series (step 2) and the Orchestrator answers from it (step 3).
 * The last step is a user's message, outside the team.
 */
export const researchRun: TaskCompleted = taskEvent({
  task: { description: "What was the gross savings rate of Belgium in 2015, in percent?" },
  outcome: "failure",
  error: { category: "task_failure", message: "The final answer was judged wrong." },
  events: [
    ["human", "system_event", "What was the gross savings rate of Belgium in 2015, in percent?"],
    ["Orchestrator", "llm_response", "WebSurfer, download the World Bank gross savings series for Belgium."],
    [
      "WebSurfer",
      "llm_response",
      "Downloaded NY.GDS.TOTL.ZS.csv (Gross domestic savings, % of GDP). Belgium 2015: 24.6",
    ],
    ["Orchestrator", "llm_response", "The file is downloaded. Request satisfied. Final answer: 24.6"],
    ["user", "llm_response", "Please answer quickly, I only need the number."],
  ].map(([actor, type, content], i) => ({
    eventId: `step-${String(i)}`,
    type: type as TaskCompleted["events"][number]["type"],
    timestamp: `2026-11-20T10:00:0${String(i)}.000Z`,
    actor,
    content: content ?? "",
  })),
});
