/**
 * A stored lesson as one text an agent can put into its prompt: what to do differently (the
 * strategy), the concrete adjustments, and the one-line learning when the strategy is missing.
 * The same text rides with a `rerun` decision and comes back from "lessons for a task".
 */

export interface PromptableLesson {
  strategyText: string | null;
  adjustments: readonly string[];
  learning?: string | null;
}

/** At most this many adjustments go into the prompt; the rest are in the stored lesson. */
export const promptMaxAdjustments = 6;
const maxChars = 2_000;

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export function lessonPrompt(lesson: PromptableLesson): string {
  const strategy = oneLine(lesson.strategyText ?? "") || oneLine(lesson.learning ?? "");
  const adjustments = lesson.adjustments.map(oneLine).filter(Boolean).slice(0, promptMaxAdjustments);
  const lines = ["Lesson from an earlier failure of a task like this one:"];
  if (strategy) lines.push(strategy);
  if (adjustments.length > 0) lines.push("Apply:", ...adjustments.map((a) => `- ${a}`));
  const text = lines.join("\n");
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}
