import type { AttributionBasis, LocatedFailure } from "../attribution/located-failure.js";
import type { TaskCompleted } from "../contracts/index.js";
import { userActor } from "./argument-sources.js";

/**
 * A lesson about the step the attribution rules found, for a failure no error explains, when the
 * rule that found it reads the step's own words (an agent that guessed, a value that became the
 * answer, code that printed it, a failure it went on from). The rules that only guess from the
 * trace's shape (the first worker or code step, the last step, a repetition) point at no cause,
 * and then no lesson is written.
 */
export interface LocatedStepLesson {
  found: string;
  adjustments: string[];
  learning: string;
  tags: string[];
}

const clean = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").replace(/["`]/g, "'").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

type Readable = Extract<
  AttributionBasis,
  | "answer_source"
  | "computed_by"
  | "shortcut"
  | "reasoning_cue"
  | "ignored_error"
  | "empty_response"
  | "failure_text"
>;
const readable = new Set<AttributionBasis>([
  "answer_source",
  "computed_by",
  "shortcut",
  "reasoning_cue",
  "ignored_error",
  "empty_response",
  "failure_text",
]);

/**
 * Where the value that became the answer came from (`answer_source`, `computed_by`) is what the
 * trace shows, not what was wrong with it: the lesson those rules would write ("check it against
 * a second source", "check what the code computes") is the same for every failure. What was
 * found is said; no lesson is written.
 */
const sourceOnly = new Set<AttributionBasis>(["answer_source", "computed_by"]);

export interface LocatedStepReading {
  found: string;
  lesson: LocatedStepLesson | null;
}

/**
 * Where a cue rule's step shows no decision to blame, on real tool-use logs (τ-bench airline: all
 * 12 lessons these rules wrote there were about a failure whose missing action no step shows):
 * - an agent's reply to a user that holds "unable to", "I need the id", "assume": the agent
 *   answering the user, not a check it skipped while working;
 * - an empty response from a tool that returned nothing every time it was called (a scratchpad
 *   such as `think`): its silence is not missing data.
 * What was found is said; no lesson is written.
 */
function noDecisionThere(located: LocatedFailure, event: TaskCompleted): string | null {
  const i = located.stepIndex;
  const step = i === undefined ? undefined : event.events[i];
  if (i === undefined || !step) return null;
  if (located.basis === "reasoning_cue" || located.basis === "shortcut") {
    const next = event.events.slice(i + 1).find((e) => e.type !== "tool_call" && e.type !== "tool_response");
    const toUser =
      step.type === "llm_response" &&
      !userActor.test(step.actor ?? "") &&
      next !== undefined &&
      userActor.test(next.actor ?? "");
    return toUser
      ? `${step.actor ?? "the agent"} told the user at step ${String(i)} "${clean(step.content, 120)}"; a reply to the user is not a check skipped while working, and no state-changing call in the trace shows what was wrong, so no cause is claimed`
      : null;
  }
  if (located.basis === "empty_response") {
    const tool = located.attribution.toolName ?? step.toolName;
    const replies = event.events.filter((e) => e.type === "tool_response" && e.toolName === tool);
    return tool !== undefined && replies.every((e) => e.content.trim() === "")
      ? `${tool} returned nothing at step ${String(i)}, as it did every time it was called, so its silence is not missing data and no cause is claimed`
      : null;
  }
  return null;
}

export function locatedStepReading(located: LocatedFailure, event: TaskCompleted): LocatedStepReading | null {
  const nothing = noDecisionThere(located, event);
  if (nothing) return { found: nothing, lesson: null };
  const lesson = locatedStepLesson(located, event);
  if (!lesson) return null;
  return { found: lesson.found, lesson: sourceOnly.has(located.basis) ? null : lesson };
}

/** An assumption ("I'll assume", "probably") rather than giving up ("unable to", "could not find"). */
const assumed = (text: string) =>
  /assum|guess|probabl|presumabl|extrapolat|roughly|likely|typical|no need to|not needed|skip|looks (correct|right)|is enough|without (verifying|checking)|did(n't| not) (open|verify|check)/i.test(
    text,
  );

export function locatedStepLesson(located: LocatedFailure, event: TaskCompleted): LocatedStepLesson | null {
  if (!readable.has(located.basis) || located.stepIndex === undefined) return null;
  const step = event.events[located.stepIndex];
  if (!step) return null;
  const basis = located.basis as Readable;
  // The answer's own step as its source says nothing about where the value came from.
  if (basis === "answer_source" && located.stepIndex === event.events.length - 1) return null;
  const n = String(located.stepIndex);
  const who = step.actor ?? located.attribution.actor ?? "the agent";
  const tool = located.attribution.toolName ?? step.toolName;
  const evidence = located.attribution.evidence ?? step.content;
  const said = `"${clean(step.content.includes(evidence.replace(/…$/, "")) ? evidence : step.content, 120)}"`;
  const question = `"${clean(event.task.description, 90)}"`;
  const tags = ["decisive-step", basis.replace(/_/g, "-"), who];
  switch (basis) {
    case "answer_source":
      return {
        found: `the final answer's value comes from step ${n}, where ${who} wrote ${said}, and the team passed it on without checking it, so the answer was wrong`,
        learning: `Before ${who}'s value from step ${n} becomes the answer to ${question}, check it against the question's exact wording and a second source: the team answered with it unchecked.`,
        adjustments: [
          `add constraint: a value ${who} reports becomes the final answer only after another agent checks it against the question's wording`,
          `change the final step from restating ${who}'s last value to citing the source it was read from`,
        ],
        tags,
      };
    case "computed_by":
      return {
        found: `the code ${who} wrote at step ${n} (${said}) printed the value that became the wrong answer, so the mistake is in what that code computes`,
        learning: `Check what ${who}'s code at step ${n} computes for ${question} — its inputs, filters and units — before its printed value becomes the answer.`,
        adjustments: [
          `add constraint: before accepting a computed answer, ${who} prints the inputs and intermediate counts and checks them against the question`,
          `change the review step from running the code to checking its filters and units against the question`,
        ],
        tags,
      };
    case "shortcut":
    case "reasoning_cue":
      if (!assumed(said))
        return {
          found: `${who} gave up at step ${n} (${said}) instead of looking another way, and the task went on without what it needed`,
          learning: `When ${who} cannot find what ${question} needs (step ${n}: ${said}), it must search another way or report it as missing, not go on without it.`,
          adjustments: [
            `add constraint: before ${who} reports a fact as unavailable, it tries a second tool or query for it`,
            `change ${who}'s next move after a failed lookup from going on to one more lookup with other terms`,
          ],
          tags,
        };
      return {
        found: `${who} guessed, assumed or skipped a check at step ${n} (${said}) instead of verifying, and the answer rested on that assumption`,
        learning: `Where ${who} assumed instead of checking (step ${n}: ${said}), it must look the fact up in the session's sources before going on; for ${question} the answer rested on that assumption.`,
        adjustments: [
          `add constraint: ${who} may not state an assumed or estimated fact as found; it looks it up or marks it unverified`,
          `change ${who}'s next move after an assumption from going on to verifying it with a tool call`,
        ],
        tags,
      };
    case "ignored_error":
      return {
        found: `${who} stated a result at step ${n} (${said}) from a run that had failed, as if it had succeeded`,
        learning: `When a run fails, ${who} must fix and rerun it before stating a result: at step ${n} it reported from a failed run for ${question}.`,
        adjustments: [
          `add constraint: ${who} reads the exit status of a run before reporting its result`,
          `change the handling of a failed run from reporting to fixing and rerunning it`,
        ],
        tags,
      };
    case "empty_response":
      return {
        found: `${tool ?? "the tool"} returned nothing at step ${n} and ${who} went on without it`,
        learning: `When ${tool ?? "a tool"} returns nothing (step ${n}), ${who} must retry or search another way instead of going on without the data ${question} needs.`,
        adjustments: [
          `add constraint: an empty response from ${tool ?? "a tool"} is retried once with other arguments before the agent goes on`,
          `change ${who}'s handling of an empty result from going on to reporting it as missing`,
        ],
        tags,
      };
    case "failure_text":
      return {
        found: `step ${n}'s output reports a failure (${said}) that ${who} did not recover from`,
        learning: `When output reports a failure like ${said} (step ${n}), ${who} must recover — fix, rerun or take another source — before continuing on ${question}.`,
        adjustments: [
          `add constraint: ${who} checks each output for failure messages before using it`,
          `change the next step after a reported failure from continuing to recovering`,
        ],
        tags,
      };
  }
}
