import type { Reflection, TaskCompleted } from "../src/domain/contracts/index.js";

/**
 * A candidate check measured by `BENCH_JUDGE_STEP_CHECK=1 npm run bench -- judge`, not part of the
 * judge: is the step an analysis blames consistent with what the trace shows there? Three readings:
 * - `atBlamed`: how many of the analysis' specifics (quoted phrases of 6–80 characters, tokens with
 *   a digit) the blamed step's content holds; an answer that blames a step it has little to say
 *   about is suspect;
 * - `introducedAtBlamed`: how many of those the blamed step is the first to hold; none means the
 *   blamed step only repeats values and claims an earlier step introduced;
 * - `quotedEarlier`: the attribution's evidence quote (its first 60 characters) is found first at
 *   an earlier step, so the blamed step only repeats what was said before.
 * Chosen on the tune part: the largest `atBlamed` floor that keeps every tune good answer is 2.
 * The judge applies none of them: none reaches the goal without losing good answers
 * (docs/benchmarks.md#judge-on-real-failures).
 */

const norm = (text: string) => text.toLowerCase().replace(/\s+/g, " ");

function specifics(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/["'“‘]([^"'”’]{6,80})["'”’]/g)) if (m[1]) out.add(norm(m[1]));
  for (const m of text.matchAll(/\b[\w.$-]*\d[\w.$-]*\b/g)) if (m[0].length >= 2) out.add(norm(m[0]));
  return [...out];
}

export interface StepConsistency {
  atBlamed: number;
  introducedAtBlamed: number;
  quotedEarlier: boolean;
}

/** Null when the reflection blames no step of this trace. */
export function stepConsistency(reflection: Reflection, event: TaskCompleted): StepConsistency | null {
  const blamed = reflection.attribution?.stepIndex;
  if (blamed === undefined || blamed >= event.events.length) return null;
  const steps = event.events.map((e) => norm(e.content));
  const evidence = norm(reflection.attribution?.evidence ?? "");
  const quotedAt = evidence.length > 10 ? steps.findIndex((s) => s.includes(evidence.slice(0, 60))) : -1;
  const at = steps[blamed] ?? "";
  const held = specifics(`${reflection.attribution?.evidence ?? ""} ${reflection.reflectionText}`).filter(
    (s) => at.includes(s),
  );
  const introducedAtBlamed = held.filter(
    (s) => steps.findIndex((step) => step.includes(s)) === blamed,
  ).length;
  return { atBlamed: held.length, introducedAtBlamed, quotedEarlier: quotedAt >= 0 && quotedAt < blamed };
}

/** The candidate rules: true keeps the item stored. */
export const stepRules: Record<string, (c: StepConsistency | null) => boolean> = {
  "(a) at least 2 of the analysis' specifics at the blamed step": (c) => c === null || c.atBlamed >= 2,
  "(b) evidence not first found at an earlier step": (c) => !c?.quotedEarlier,
  "(c) the blamed step introduces at least one of them": (c) => c === null || c.introducedAtBlamed >= 1,
  "(a) and (b)": (c) => c === null || (c.atBlamed >= 2 && !c.quotedEarlier),
};
