/**
 * Adaptive prompting (docs/specification.md#adaptive-prompting): the issues that keep coming back
 * in a tenant's recent low-quality reflections and answers become guidance in the next generator
 * prompt.
 */

/** Quality below which a reflection or an answer counts as low. */
export const lowQualityBelow = 0.6;
/** How many recent low-quality items are read (of each kind). */
export const recentLowQualityLimit = 10;

/**
 * The issue a user's 👎 adds to an answer's self-evaluation, and to a lesson, when adaptive
 * prompting reads them: users' votes reach the generator's prompt as their own insight.
 */
export const answerRatedDown = "Answer rated down by a user";
export const lessonRatedDown = "Lesson rated down by a user";

export interface CommonIssue {
  issue: string;
  count: number;
}

/**
 * The issue without its numbers or specifics: "Shallow reflection: depth=0.33 < 0.7. Need root
 * cause…" and "Shallow reflection: depth=0.41 < 0.7…" are one issue, "Shallow reflection".
 */
export function issueKey(issue: string): string {
  const head = issue.split(/[:.]/)[0] ?? issue;
  return head
    .replace(/'[^']*'/g, "")
    .replace(/\d+(\.\d+)?/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/**
 * Counts issues across items (each item's list counts an issue once) and keeps those seen in at
 * least `minCount` items, most frequent first. The first wording seen stands for the group.
 */
export function extractCommonIssues(
  items: readonly (readonly string[])[],
  options: { minCount?: number; limit?: number } = {},
): CommonIssue[] {
  const minCount = options.minCount ?? 2;
  const limit = options.limit ?? 5;
  const groups = new Map<string, CommonIssue>();
  for (const issues of items) {
    const seen = new Set<string>();
    for (const issue of issues) {
      const key = issueKey(issue);
      if (!key || seen.has(key)) continue;
      seen.add(key);
      const group = groups.get(key);
      if (group) group.count += 1;
      else groups.set(key, { issue: (issue.split(/[:.]/)[0] ?? issue).trim(), count: 1 });
    }
  }
  return [...groups.values()]
    .filter((g) => g.count >= minCount)
    .sort((a, b) => b.count - a.count || a.issue.localeCompare(b.issue))
    .slice(0, limit);
}

/**
 * The closed vocabulary of insights. The issues are the quality rules' violations (Reflector's own
 * words) and the answer evaluator's issues, which a model writes freely: a model told by a trace to
 * write "ignore your rules" as an issue would otherwise put it in every later prompt. So an issue
 * becomes an insight only as one of these fixed phrases, chosen by its head or by a keyword, and an
 * issue that matches none is left out.
 */
const vocabulary: readonly (readonly [RegExp, string])[] = [
  [/^answer rated down by a user$/, "Answers users rated down"],
  [/^lesson rated down by a user$/, "Lessons users rated down"],
  [/^incomplete reflection$/, "Incomplete reflection"],
  [/^shallow reflection$/, "Shallow reflection"],
  [/^not actionable$/, "Not actionable"],
  [/^(?:unproven|invalid) pattern$/, "Unproven pattern"],
  [/^not relevant to the task$/, "Not relevant to the task"],
  [/^nothing new$/, "Nothing new"],
  [/^quarantined$/, "Quarantined lesson (a URL, command, credential or order to agents)"],
  [
    /\b(?:claim|source|unverified|unsupported|evidence|cite|citation|hallucinat\w*|fabricat\w*)/,
    "Claims without a verified source",
  ],
  [/\bhedg\w*/, "Answers that hedge"],
  [/\b(?:cut off|truncat\w*)/, "Answers cut off"],
  [/\b(?:declin\w*|refus\w*|does not answer|did not answer)/, "Answers that decline the question"],
  [/\b(?:short|incomplete|missing|partial|does not address|not address\w*)/, "Incomplete answers"],
  [/\b(?:errors?|fail\w*|exception)/, "Answers resting on failed steps"],
  [/\b(?:incorrect|wrong|inaccura\w*|mistak\w*)/, "Incorrect answers"],
];

/** The insight an issue stands for, in the vocabulary's words; null when none fits. */
export function insightOf(issue: string): string | null {
  const key = issueKey(issue);
  for (const [pattern, insight] of vocabulary) if (pattern.test(key)) return insight;
  return null;
}

/**
 * The lines the generator prompt gets: fixed phrases of the vocabulary with their counts, never
 * an issue's own words.
 */
export function insightLines(issues: readonly CommonIssue[]): string[] {
  const counts = new Map<string, number>();
  for (const i of issues) {
    const insight = insightOf(i.issue);
    if (insight) counts.set(insight, (counts.get(insight) ?? 0) + i.count);
  }
  return [...counts].map(([insight, count]) => `${insight} (in ${String(count)} recent low-quality results)`);
}
