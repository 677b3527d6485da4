import type { Reflection } from "../contracts/index.js";
import type { QualityConfig } from "./quality-config.js";

/**
 * The required parts, by the names the quality rules give them and where they live here.
 * `patterns_identified` is a list of hypotheses that the tenant's episodes confirm later: an
 * empty list is an answer ("none seen yet"), so it is present whenever it is a list.
 */
export const requiredFields = [
  { name: "analysis", get: (r: Reflection) => r.reflectionText, emptyListCounts: false },
  { name: "patterns_identified", get: (r: Reflection) => r.patterns, emptyListCounts: true },
  { name: "strategy_adjustments", get: (r: Reflection) => r.adjustments, emptyListCounts: false },
  { name: "learning", get: (r: Reflection) => r.learning, emptyListCounts: false },
] as const;

export interface Completeness {
  score: number;
  missingFields: string[];
}

/**
 * A text field counts when longer than 10 characters after trimming, a list when non-empty
 * (patterns: when it is a list at all). `literal`: the rules as written, where a text counts by its
 * length as given and every list, patterns included, must be non-empty.
 */
export function checkCompleteness(
  reflection: Reflection,
  config: QualityConfig["completeness"],
  literal = false,
): Completeness {
  const missingFields = requiredFields
    .filter(({ get, emptyListCounts }) => {
      const value = get(reflection);
      if (typeof value === "string") return (literal ? value : value.trim()).length <= config.minTextChars;
      return !Array.isArray(value) || (value.length === 0 && (literal || !emptyListCounts));
    })
    .map(({ name }) => name);
  return { score: (requiredFields.length - missingFields.length) / requiredFields.length, missingFields };
}
