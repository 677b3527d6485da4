/**
 * Pattern validity. A pattern is evidenced by the tenant's stored episodes: an episode
 * matches when it contains at least 70% of the pattern's keywords; fewer than 3 matches means
 * "insufficient data" (0), otherwise confidence = matches / episodes retrieved.
 */

const stopWords = new Set([
  "a",
  "an",
  "the",
  "of",
  "on",
  "in",
  "to",
  "for",
  "and",
  "or",
  "with",
  "is",
  "at",
  "by",
]);

export function patternKeywords(pattern: string): string[] {
  return (pattern.toLowerCase().match(/[a-z0-9_]+/g) ?? []).filter((word) => !stopWords.has(word));
}

export function episodeMatchesPattern(episode: string, pattern: string, keywordShare = 0.7): boolean {
  const keywords = patternKeywords(pattern);
  if (keywords.length === 0) return false;
  const text = episode.toLowerCase();
  const found = keywords.filter((keyword) => text.includes(keyword)).length;
  return found >= keywords.length * keywordShare;
}

export function patternValidity(
  evidence: { occurrences: number; total: number },
  minOccurrences = 3,
): number {
  if (evidence.occurrences < minOccurrences || evidence.total === 0) return 0;
  return Math.min(1, evidence.occurrences / evidence.total);
}

/**
 * The stored evidence plus the episode being judged, which is one of the tenant's episodes too:
 * it is retrieved when it holds any of the pattern's keywords, and it counts as an occurrence
 * when it holds enough of them.
 */
export function withEpisode(
  evidence: ReadonlyMap<string, { occurrences: number; total: number }>,
  patterns: readonly string[],
  episode: string,
  keywordShare = 0.7,
): Map<string, { occurrences: number; total: number }> {
  const text = episode.toLowerCase();
  return new Map(
    patterns.map((pattern) => {
      const stored = evidence.get(pattern) ?? { occurrences: 0, total: 0 };
      const retrieved = patternKeywords(pattern).some((keyword) => text.includes(keyword));
      const matches = episodeMatchesPattern(episode, pattern, keywordShare);
      return [
        pattern,
        { occurrences: stored.occurrences + (matches ? 1 : 0), total: stored.total + (retrieved ? 1 : 0) },
      ];
    }),
  );
}

/**
 * A recalled lesson's own recurrences are evidence of its patterns: memory recognised each of
 * them as the same mistake, so a lesson seen `seen` times (this occurrence included) has shown
 * what its patterns describe that many times, whatever words they are written in. Keyword matches
 * can only confirm patterns that reuse the trace's words; a model writes them in its own. From
 * `minOccurrences` recurrences a pattern counts as proven; below that the keyword evidence stands.
 */
export function withRecurrences(
  evidence: ReadonlyMap<string, { occurrences: number; total: number }>,
  seen: number,
  minOccurrences = 3,
): Map<string, { occurrences: number; total: number }> {
  if (seen < minOccurrences) return new Map(evidence);
  return new Map([...evidence].map(([pattern]) => [pattern, { occurrences: seen, total: seen }]));
}
