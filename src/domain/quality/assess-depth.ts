import type { QualityConfig } from "./quality-config.js";

/**
 * Depth: which depth indicators the analysis uses decides the base score (≥2 deep → 0.9,
 * ≥2 medium → 0.7, ≥1 shallow → 0.5, else 0.3), longer analyses earn up to +0.1, and anything
 * under 50 characters is 0.2 whatever it says.
 */
export function assessDepth(analysis: string, config: QualityConfig["depth"]): number {
  if (analysis.length < config.shortLengthChars) return config.shortScore;
  const text = analysis.toLowerCase();
  const count = (indicators: string[]) => indicators.filter((indicator) => text.includes(indicator)).length;
  let base = config.levels.surface;
  if (count(config.indicators.deep) >= config.minDeepIndicators) base = config.levels.deep;
  else if (count(config.indicators.medium) >= config.minMediumIndicators) base = config.levels.medium;
  else if (count(config.indicators.shallow) >= config.minShallowIndicators) base = config.levels.shallow;
  const lengthBonus = Math.min(config.maxLengthBonus, analysis.length / config.lengthBonusChars);
  return Math.min(1, base + lengthBonus);
}
