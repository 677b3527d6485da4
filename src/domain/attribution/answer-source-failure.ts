import type { TraceEvent } from "../contracts/index.js";
import { answerValue, statesAnswer } from "./answer-source.js";
import { attributionConfidence } from "./attribution-confidence.js";
import { shortcutFrom } from "./cue-rules.js";
import { isErrorStep } from "./explicit-errors.js";
import { locatedAt, type AttributionBasis, type LocatedFailure } from "./located-failure.js";
import { evidenceMaxChars, firstCue, needleOf, partialCues, quoteAround, squeeze } from "./trace-scan.js";
import { isToolOutput, type TraceView } from "./trace-view.js";

/**
 * Rule A2 of attribute-failure.ts: the step the final answer's value comes from (answer-source.ts),
 * and what made it wrong — a failed run whose output an agent stated anyway, a shortcut from there
 * on, a partial figure taken for the whole, the code that printed it, or the step that chose it.
 * Null when the answer's value appears nowhere before the final answer, or the task has none.
 */
export function answerSourceFailure(view: TraceView): LocatedFailure | null {
  const { event, steps, searchable, lower, flat } = view;
  const value = answerValue(event);
  if (!value) return null;
  // A step that restates the whole question (the plan, the task hand-out) is not a source.
  const questionNeedle = needleOf(event.task.description, 24);
  const restatesQuestion = (i: number) =>
    questionNeedle !== null && (lower(i).includes(questionNeedle) || flat(i).includes(questionNeedle));
  const states = (i: number) => {
    const s = steps[i];
    return s !== undefined && statesAnswer(s, value) && !restatesQuestion(i);
  };
  const source = searchable.find(states) ?? -1;
  const sourceStep = steps[source];
  if (!sourceStep) return null;
  /** The first agent step after `index` that states the value too. */
  const restated = (index: number): number =>
    searchable.find((i) => i > index && !isToolOutput(steps[i]) && states(i)) ?? -1;
  const quoteOf = (i: number, prefix: string) =>
    `${prefix}${squeeze(steps[i]?.content ?? "", evidenceMaxChars - prefix.length)}`;
  const at = (basis: AttributionBasis, i: number, confidence: number, evidence: string) =>
    locatedAt(steps, basis, i, confidence, evidence);

  let stated = source;
  let code = -1;
  if (isToolOutput(sourceStep)) {
    const claim = restated(source);
    if (isErrorStep(sourceStep) && claim >= 0) {
      // The value came out of a run that failed. If a run that succeeded printed it again
      // before anyone stated it, that run is its source; otherwise whoever stated it next
      // ignored the failure.
      const rerun = searchable.find((i) => {
        const s = steps[i];
        return i > source && i < claim && isToolOutput(s) && s !== undefined && !isErrorStep(s) && states(i);
      });
      if (rerun === undefined)
        return at(
          "ignored_error",
          claim,
          attributionConfidence.ignoredError,
          quoteOf(claim, `stated after the failure at step ${String(source)}: `),
        );
      code = codeOfRun(steps, rerun);
    } else code = codeOfRun(steps, source);
    if (claim >= 0) stated = claim;
  }
  // A shortcut from the source on: the answer was guessed, or accepted unchecked.
  const shortcut = shortcutFrom(view, source);
  if (shortcut) return shortcut;
  // A partial figure taken for the whole: the next agent to act on it stopped early.
  const statedStep = steps[stated];
  const partial = statedStep && !isToolOutput(statedStep) ? firstCue(lower(stated), partialCues) : null;
  if (statedStep && partial) {
    const taker = searchable.find((i) => {
      const s = steps[i];
      return i > stated && s?.type === "llm_response" && s.actor !== statedStep.actor;
    });
    if (taker !== undefined)
      return at(
        "shortcut",
        taker,
        attributionConfidence.shortcut,
        `took a partial figure for the answer (step ${String(stated)}: ${quoteAround(statedStep.content, partial.at, 120)})`,
      );
  }
  // Printed by code that ran: the code is where the value was computed.
  if (code >= 0)
    return at(
      "computed_by",
      code,
      attributionConfidence.computedBy,
      quoteOf(code, `its output at step ${String(source)} is the answer: `),
    );
  // Fetched from a page or a file, the agent that took the value from it chose it; or the
  // value was first written by an agent.
  return at("answer_source", stated, attributionConfidence.answerSource, quoteOf(stated, ""));
}

/**
 * The step holding the code that the run at `index` executed, or -1 when that run's input was
 * not code. Each run executes one code message (AutoGen's executors run the code in a message; a
 * code tool's call holds it), so runs and code messages pair up like brackets: a run belongs to
 * the latest code message before it that no other run has taken. One pass up to `index`.
 */
function codeOfRun(steps: readonly TraceEvent[], index: number): number {
  const pending: number[] = [];
  let message: TraceEvent | undefined; // the latest step that is not a tool output
  const holdsCode = (s: TraceEvent | undefined) =>
    s !== undefined && ((s.type === "tool_call" && isCodeTool(s.toolName)) || s.content.includes("```"));
  const isCodeRun = (s: TraceEvent) => isCodeTool(s.toolName) || holdsCode(message);
  for (let i = 0; i < index; i += 1) {
    const s = steps[i];
    if (!s) continue;
    if (!isToolOutput(s)) {
      message = s;
      if (holdsCode(s)) pending.push(i);
    } else if (isCodeRun(s)) pending.pop();
  }
  const run = steps[index];
  return run && isCodeRun(run) ? (pending.pop() ?? -1) : -1;
}

const codeToolWords = ["code", "exec", "python", "shell", "terminal", "sandbox", "interpreter"];
function isCodeTool(name: string | undefined): boolean {
  const lower = name?.toLowerCase() ?? "";
  return codeToolWords.some((w) => lower.includes(w));
}
