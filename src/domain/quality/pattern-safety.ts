/**
 * The quality patterns are regular expressions from settings, searched unanchored in text that a
 * producer controls. Every text is clipped to `patternTextChars` before a pattern sees it, and a
 * pattern is accepted only when its cost on that much text is bounded: no nested or repeated
 * unbounded quantifier that backtracks without end, no backreference, and a measured search of
 * crafted worst-case text of the clipped length within `patternBudgetMs`. Then the work per text is
 * a constant and the work per event grows linearly with its number of texts.
 */

/** Characters of one text a quality pattern is searched in. */
export const patternTextChars = 400;

/** What a pattern may take, at most, on crafted text of the clipped length. */
export const patternBudgetMs = 5;

export function clipForPattern(text: string): string {
  return text.length > patternTextChars ? text.slice(0, patternTextChars) : text;
}

/** A quantified group holding a quantifier: `(a+)+`, `(a|a?)*`, `(\w+\s?)*`. */
const nestedQuantifier = /\((?:[^()\\]|\\.)*(?:[+*]|\{\d+,\d*\})(?:[^()\\]|\\.)*\)(?:[+*]|\{\d+,\d*\})/;
const unboundedQuantifier = /(?:^|[^\\])(?:[+*]|\{\d+,\})/g;

/**
 * Texts built from the pattern's own characters, each ending in a character that breaks a match,
 * by growing lengths up to the clipped one: small steps first, so that a pattern that backtracks
 * exponentially goes over the budget before a probe could hang.
 */
function probes(pattern: string): string[] {
  const literal = pattern.replace(/\\[a-zA-Z]|[\\^$.*+?()[\]{}|]/g, "") || "a";
  const units = [literal, `${literal} `, "a", "a ", "0", ...new Set(literal.slice(0, 8))];
  const lengths: number[] = [];
  for (let n = 8; n <= 64; n += 4) lengths.push(n);
  for (let n = 96; n < patternTextChars; n = Math.round(n * 1.5)) lengths.push(n);
  lengths.push(patternTextChars);
  return lengths.flatMap((n) =>
    units.map((unit) => `${unit.repeat(Math.ceil(n / Math.max(1, unit.length))).slice(0, n - 1)}\u0001`),
  );
}

/** Why a pattern may not be used, or null when it may. */
export function patternProblem(pattern: string): string | null {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (err) {
    return `not a regular expression: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (nestedQuantifier.test(pattern))
    return "a quantified group holds a quantifier (it can backtrack without end)";
  if (/\\[1-9]|\\k</.test(pattern)) return "a backreference";
  if ((pattern.match(unboundedQuantifier) ?? []).length > 3) return "more than three unbounded quantifiers";
  for (const text of probes(pattern)) {
    let best = Infinity;
    for (let run = 0; run < 2; run++) {
      const started = performance.now();
      re.test(text);
      best = Math.min(best, performance.now() - started);
    }
    if (best > patternBudgetMs)
      return `took ${best.toFixed(1)} ms on ${String(text.length)} crafted characters (budget ${String(patternBudgetMs)} ms on up to ${String(patternTextChars)})`;
  }
  return null;
}
