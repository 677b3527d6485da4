import { clipForPattern } from "./pattern-safety.js";
import type { QualityConfig } from "./quality-config.js";
import { wordsOf, type TraceFacts } from "./trace-facts.js";

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
 * Words any lesson may use whatever its task: sharing them with a trace says nothing about
 * fitting it. Four letters or more; shorter words are not counted at all.
 */
const lessonWords = new Set(
  (
    "about above after again against always answer answers approach before being below between both " +
    "careful carefully cases change check checked checking checks claim claims clear code compare " +
    "complete confirm constraint constraints correct correctly could data detail details different " +
    "does done each ensure error errors every exact explicit explicitly fact facts fail failed failure " +
    "failures final first from future have into issue issues just later make many method more most " +
    "must need needed never next once only other output outputs over proper properly quality question " +
    "questions reasoning relevant request requests require required requirement requirements response " +
    "result results review same should source sources specific step steps strategy such sure system " +
    "take task tasks than that their them then there these they this those thorough thoroughly through " +
    "tool tools true under until used user users using validate validation value values verification " +
    "verified verify were what when where which while will with within without work would agent agents " +
    "information process instead rather again better improve attention accurate accuracy assumption " +
    "assumptions consider considered important appropriate reliable mistake mistakes wrong right " +
    "avoid incorrect robust flawed systematic fundamental fundamentally sound approach approaches " +
    "modification modifications expected state match matches reference everything anything best " +
    "less double thinking depth level levels robustly adopt follow follows rule rules handle handling"
  ).split(" "),
);

/**
 * Whether an adjustment names something an agent can act on for this kind of task: a parameter,
 * number or identifier, an agent or tool of the trace, one of the trace's own words that lessons
 * do not use everywhere, or at least three such words of its own. "Add constraint: double-check
 * the result" and "change strategy to a more robust approach" name nothing. Read on a bounded
 * prefix of the adjustment, so the cost does not grow with its length times the trace's names.
 */
export function namesSomethingConcrete(whole: string, facts: TraceFacts): boolean {
  const adjustment = clipForPattern(whole);
  const words = wordsOf(adjustment);
  if (words.some((w) => /\d/.test(w) || w.includes("_") || /\p{L}\.\p{L}/u.test(w))) return true;
  if (/[<>]=?|==|!=|≥|≤/.test(adjustment)) return true;
  if (/[A-Z][a-z]+[A-Z]/.test(adjustment)) return true;
  const lower = adjustment.toLowerCase();
  if ([...facts.names].some((name) => lower.includes(name))) return true;
  const distinctive = new Set(words.filter((w) => w.length >= 4 && !lessonWords.has(w)));
  return [...distinctive].some((w) => facts.words.has(w)) || distinctive.size >= 3;
}

/**
 * Actionability ladder over the strategy adjustments: none 0.0; all executable 1.0;
 * ≥80% executable 0.8; ≥50% vague 0.4; otherwise 0.6. Matching is on lower-cased text.
 *
 * With the trace's facts (the grounded reading), an adjustment in an executable form that names
 * nothing concrete for this kind of task ("add constraint: verify the answer") counts as vague:
 * the form alone is not a lesson.
 */
export function scoreActionability(
  adjustments: string[],
  config: QualityConfig["actionability"],
  facts?: TraceFacts,
): number {
  if (adjustments.length === 0) return 0;
  let actionable = 0;
  let vague = 0;
  for (const whole of adjustments) {
    // Patterns from settings are searched unanchored: only a bounded prefix, so the cost is too.
    const adjustment = clipForPattern(whole);
    const text = adjustment.toLowerCase();
    const executable = config.actionablePatterns.some((p) => regex(p).test(text));
    if (executable && (!facts || namesSomethingConcrete(adjustment, facts))) actionable += 1;
    else if (executable || config.vaguePatterns.some((p) => regex(p).test(text))) vague += 1;
  }
  const total = adjustments.length;
  if (actionable === total) return 1;
  if (actionable >= total * 0.8) return 0.8;
  if (vague >= total * 0.5) return 0.4;
  return 0.6;
}
