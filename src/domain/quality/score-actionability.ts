import type { QualityConfig } from "./quality-config.js";

const compiled = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(pattern);
    compiled.set(pattern, re);
  }
  return re;
}

/**
 * Actionability ladder over the strategy adjustments: none 0.0; all executable 1.0;
 * ≥80% executable 0.8; ≥50% vague 0.4; otherwise 0.6. Matching is on lower-cased text.
 */
export function scoreActionability(adjustments: string[], config: QualityConfig["actionability"]): number {
  if (adjustments.length === 0) return 0;
  let actionable = 0;
  let vague = 0;
  for (const adjustment of adjustments) {
    const text = adjustment.toLowerCase();
    if (config.actionablePatterns.some((p) => regex(p).test(text))) actionable += 1;
    else if (config.vaguePatterns.some((p) => regex(p).test(text))) vague += 1;
  }
  const total = adjustments.length;
  if (actionable === total) return 1;
  if (actionable >= total * 0.8) return 0.8;
  if (vague >= total * 0.5) return 0.4;
  return 0.6;
}
