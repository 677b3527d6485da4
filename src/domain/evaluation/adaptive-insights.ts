/**
 * Adaptive prompting (docs/specification.md#adaptive-prompting): the issues that keep coming back
 * in a tenant's recent low-quality reflections and answers become guidance in the next generator
 * prompt.
 */

/** Quality below which a reflection or an answer counts as low. */
export const lowQualityBelow = 0.6;
/** How many recent low-quality items are read (of each kind). */
export const recentLowQualityLimit = 10;

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

/** The lines the generator prompt gets ("pay special attention to: …"). */
export function insightLines(issues: readonly CommonIssue[]): string[] {
  return issues.map((i) => `${i.issue} (in ${i.count} recent low-quality results)`);
}
