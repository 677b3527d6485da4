import type { Reflection } from "../contracts/index.js";
import { identifierOf } from "../heuristic/instruction-slots.js";
import type { DreamGroup } from "./dream-groups.js";

/** Items ranked by how many sources carry them (ties: first seen first). */
function byFrequency(lists: readonly (readonly string[])[]): { item: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const list of lists) for (const item of new Set(list)) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].map(([item, count]) => ({ item, count })).sort((a, b) => b.count - a.count);
}

function firstSentence(text: string, max = 220): string {
  const sentence = /^.*?[.!?](\s|$)/s.exec(text)?.[0]?.trim() ?? text.trim();
  return sentence.length > max ? `${sentence.slice(0, max - 1)}…` : sentence;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * The offline (heuristic) pattern lesson: no model, only what the group's stored lessons say.
 * The adjustments, patterns and tags kept are the ones most sources share, so the pattern is
 * their common ground rather than a new claim; the judge then decides whether it is worth keeping.
 */
export function synthesizePatternLesson(group: DreamGroup): Reflection {
  const sources = group.sources.map((s) => s.reflection);
  const n = sources.length;
  const occurrences = group.sources.reduce((sum, s) => sum + s.occurrences, 0);
  const adjustments = byFrequency(sources.map((r) => r.adjustments))
    .slice(0, 3)
    .map((a) => a.item);
  const rankedPatterns = byFrequency(sources.map((r) => r.patterns));
  const shared = rankedPatterns.filter((p) => p.count >= 2);
  const patterns = (shared.length ? shared : rankedPatterns.slice(0, 2)).slice(0, 3).map((p) => p.item);
  const tags = byFrequency(sources.map((r) => r.tags))
    .filter((t) => t.count * 2 >= n)
    .map((t) => t.item);
  const causes = sources.slice(0, 3).map((r) => firstSentence(r.reflectionText));
  const first = adjustments[0] ?? "apply the shared adjustments below to every task of this kind";
  // The group's label is the producers' error category (or the signature's type): a trace's text.
  // The instructions name it only when it is an identifier (`timeout_error`), else not at all.
  const family = identifierOf(group.label);

  const reflectionText =
    `${String(n)} high-importance reflections on ${group.label} failures (${String(occurrences)} occurrences in all) ` +
    `describe the same systematic error: ${causes.join(" ")} ` +
    `The recurrence is caused by an incorrect assumption that each failure was a one-off, because every lesson ` +
    `was applied to the task that failed instead of becoming a standing strategy for ${group.label} work; ` +
    `the approach that the stored lessons agree on is: ${first}.`;
  return {
    reflectionText,
    strategyText: `For every task at risk of ${family ?? "failures of this family"}: ${adjustments.join("; ")}.`,
    importance: round2(Math.max(...sources.map((r) => r.importance))),
    confidence: round2(sources.reduce((sum, r) => sum + r.confidence, 0) / n),
    tags: [...new Set([...tags, "pattern"])],
    errorCategory: sources[0]?.errorCategory ?? null,
    patterns,
    adjustments,
    learning: `Recurring ${family ? `${family} failures` : "failures of one family"} need one standing rule, not per-task fixes: ${first}.`,
  };
}
