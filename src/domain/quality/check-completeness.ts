import type { Reflection } from "../contracts/index.js";
import type { QualityConfig } from "./quality-config.js";

/** The required parts, by the names the quality rules give them and where they live here. */
export const requiredFields = [
  { name: "analysis", get: (r: Reflection) => r.reflectionText },
  { name: "patterns_identified", get: (r: Reflection) => r.patterns },
  { name: "strategy_adjustments", get: (r: Reflection) => r.adjustments },
  { name: "learning", get: (r: Reflection) => r.learning },
] as const;

export interface Completeness {
  score: number;
  missingFields: string[];
}

/** A text field counts when longer than 10 characters, a list when non-empty. */
export function checkCompleteness(
  reflection: Reflection,
  config: QualityConfig["completeness"],
): Completeness {
  const missingFields = requiredFields
    .filter(({ get }) => {
      const value = get(reflection);
      return typeof value === "string" ? value.trim().length <= config.minTextChars : value.length === 0;
    })
    .map(({ name }) => name);
  return { score: (requiredFields.length - missingFields.length) / requiredFields.length, missingFields };
}
