import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { attributeFailure } from "../attribution/attribute-failure.js";

/** The step where a failed trace went wrong, as attribution finds it; none for successes. */
export function failingStepOf(event: TaskCompleted): TraceEvent | undefined {
  const index = attributeFailure(event)?.stepIndex;
  return index === undefined ? undefined : event.events[index];
}
