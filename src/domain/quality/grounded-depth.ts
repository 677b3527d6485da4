import type { Attribution } from "../contracts/index.js";
import type { QualityConfig } from "./quality-config.js";
import { comparable, wordsOf, type TraceFacts } from "./trace-facts.js";
import { quotable } from "./lesson-screen.js";

/**
 * Depth earned by what an analysis says about its trace, not by the words it uses. The quality
 * rules' four levels stay (symptom, what happened, why, the decision or assumption behind it);
 * an analysis reaches a level by naming things the trace holds:
 *
 * - **specifics**: step indexes (or step ids) that exist in the trace, its agents and tools by
 *   name, quoted text, numbers and identifiers (`NY.GDS.TOTL.ZS`, `book_reservation`, `HAT123`)
 *   found in the trace. A specific the trace does not hold (a step past its end, a quote or value
 *   from elsewhere, a step said to be another agent's) is ungrounded; when those are a large share
 *   of its specifics, the analysis describes another run and counts as a symptom. What the task
 *   statement already says (its names, its numbers) grounds nothing: restating the question is not
 *   reading the run. A step index counts when what the sentence says of it is in that step.
 * - **where**: a grounded step, agent or tool; **what**: a grounded value, quote or identifier.
 * - **mechanism** ("because", "so", "led to", "instead of", …) and **decision or assumption**
 *   ("assumed", "accepted", "did not check", "chose", …) cues, counted only in a sentence that
 *   holds a grounded specific, or the sentence after one: a cue next to nothing of the trace is
 *   an indicator word, and words alone raise nothing.
 *
 * Grounding is necessary, not sufficient. A sentence that says the cause is not visible or not
 * known ("the trace holds no error event that explains it") states no cause: the analysis is a
 * symptom, not a lesson, whatever it quotes. A mechanism counts beside the run's content (a step,
 * a value, a quote), not beside an agent's name alone. A decision or assumption counts only in a sentence that holds a grounded
 * specific and says what was assumed: "assumed the step would succeed; that incorrect assumption
 * is the strategy flaw" names none.
 *
 * Levels: no grounded specific → symptom; located or valued but not both, or no grounded
 * mechanism → what happened; where + what + mechanism → why; that plus a grounded decision or
 * assumption and enough grounded specifics → the assumption behind it. A reflection whose
 * attribution blames a step no agent of the team produced (the user's message, the task
 * statement) has not found where the team went wrong, whatever it quotes: a symptom. The length
 * bonus and the short-analysis floor are the literal reading's.
 */

export type DepthLevel = "surface" | "shallow" | "medium" | "deep";

export interface GroundedDepth {
  score: number;
  level: DepthLevel;
  /** Specifics of the analysis found in the trace, as written in the analysis. */
  grounded: string[];
  /** Specifics the trace does not hold. */
  ungrounded: string[];
  where: boolean;
  what: boolean;
  mechanism: boolean;
  assumption: boolean;
  /** The step the reflection blames when no agent of the team produced it (the user's message). */
  blamesOutsideTeam: number | null;
  /** It says the cause is not visible or not known: it has not found one. */
  admitsNoCause: boolean;
}

const mechanismCue =
  /\b(because|since|so (?:that|the|it|every|all|its|his|her|their)|so\b|which (?:led|meant|made|caused|left)|led to|leading to|lead to|caus(?:ed|ing|es)|result(?:ed|ing|s)? in|as a result|therefore|thus|hence|due to|meaning|instead of|rather than|without|never|then (?:used|gave|answered|reported|returned)|from then on|every later|all later|downstream)\b|→|->/i;

const assumptionCue =
  /\b(assum(?:ed|ing|ption)|accept(?:ed|ing)|chose|choosing|decided|decision|trust(?:ed|ing)|relied|rel(?:y|ying) on|took .{1,40}(?:as|at face value)|treat(?:ed|ing) .{1,40} as|believ(?:ed|ing)|guess(?:ed|ing)|misread|misinterpret(?:ed|ing)|misunderst(?:ood|anding)|mistook|mistak(?:e|en)|confus(?:ed|ing)|overlook(?:ed|ing)|ignor(?:ed|ing)|skipp(?:ed|ing)|did not (?:check|verify|confirm|ask|read|compare|validate|look|consider|notice)|didn't (?:check|verify|confirm|ask|read|compare|validate|look|consider|notice)|never (?:checked|verified|confirmed|asked|compared|validated)|without (?:checking|verifying|confirming|asking|reading|comparing|validating|looking)|fail(?:ed|s)? to|should have|instead of|rather than|premature(?:ly)?|unverified|hallucinat(?:ed|ing))\b/i;

/**
 * A sentence that says the cause is not visible or not known. An analysis that says so has not
 * found the cause, whatever it quotes around it: it describes what happened (at most "shallow").
 */
const noCauseAdmission =
  /\b(?:no (?:[\w-]+ ){0,2}(?:errors?|steps?|events?|evidence|messages?|failures?)[^.;]{0,60}?\b(?:explains?|shows? why|accounts? for|reveals?)|(?:does|do|did) not (?:show|reveal|explain|say|tell) (?:why|what caused|the (?:root )?cause)|(?:root )?cause (?:is|was|remains) (?:not (?:visible|clear|known|shown|evident)|unclear|unknown|undetermined|not determinable)|(?:cannot|can't|could not|couldn't) (?:tell|determine|see|establish|identify|explain) (?:why|what caused|the (?:root )?cause)|no (?:root )?cause (?:is|was|can be) (?:claimed|identified|visible|shown|determined|given)|unexplained|the (?:failure|error|problem) (?:is|was|lies in|reflects) (?:the |a |an )?(?:mismatch|difference|discrepancy|gap) between|(?:failure|problem) (?:lies|is) in the overall approach)\b/i;

/**
 * An assumption blamed without saying what was assumed ("assumed the step would succeed", "that
 * incorrect assumption is the strategy flaw"): a cause in form only. Removed from a sentence before
 * its own assumption cues are read.
 */
const vagueAssumption =
  /\bassum(?:ed|ing|ption)\b[^.;]{0,40}?\b(?:would|will|to) (?:succeed|work|be (?:correct|fine|enough|sufficient|right|valid|successful))\b|\bassum(?:ed|ing)\b (?:that )?(?:its|the|their|his|her|this) (?:own )?(?:approach|plan|reasoning|chain of reasoning|conclusion|answer|result|results|actions?|strategy|work|output|steps?)\b[^.;]{0,40}?\b(?:was|were|is|are|would be|matched|met|fit|answered)\b|\bassum(?:ed|ing)\b (?:that )?(?:its|their|his|her) (?:[\w-]+[ ,]+){0,8}?(?:was|were|is|are|would be|would (?:surface|give|yield|produce|find|reach|get|lead to|satisfy))\b|\b(?:that|this|the|an?|its) (?:incorrect|wrong|flawed|faulty|mistaken|bad|false|implicit|underlying|unverified) assumption\b|\b(?:that|this) assumption is the root cause\b|\bstrategy flaw\b/gi;

/** A sentence that rules a cause out ("so the failure is not a retrieval problem"): it states none. */
const rulesOut =
  /\b(?:so|therefore|thus|hence) (?:the )?(?:failure|problem|error|issue|cause) (?:is|was) not\b/i;

const stepList =
  /\b(?:steps?|index(?:es)?|indices|turns?)\s*[#:]?\s*(\d{1,5}(?:\s*(?:,|and|or|to|through|–|-)\s*\d{1,5})*)/gi;

export const quotePattern =
  /"([^"\n]{3,300})"|“([^”\n]{3,300})”|`([^`\n]{2,300})`|(?<![\p{L}\p{N}])'([^'\n]{3,200})'(?![\p{L}\p{N}])/gu;

/** Words that look like identifiers but every analysis may use. */
const commonTokens = new Set(["e.g", "i.e", "etc", "vs", "n/a", "and/or"]);

export type Grounding = "grounded" | "ungrounded" | "neutral";

/** How much of an analysis is read for its specifics. */
const maxAnalysisChars = 20_000;

/**
 * Where a text is found: in the run (grounded), only in the task statement (neutral: restating
 * the question says nothing about the run), or nowhere (ungrounded).
 */
function locate(found: (text: string) => boolean, facts: TraceFacts): Grounding {
  if (found(facts.runText)) return "grounded";
  return found(facts.taskText) ? "neutral" : "ungrounded";
}

export function quoteFound(quote: string, facts: TraceFacts): Grounding {
  const fragments = comparable(quote)
    .split(/…|\.\.\.|\[cut[^\]]*\]/)
    .map((f) => f.trim())
    .filter((f) => f.length >= 2);
  if (fragments.length === 0) return "neutral";
  if (fragments.every((fragment) => facts.text.includes(fragment)))
    return locate((text) => fragments.every((fragment) => text.includes(fragment)), facts);
  const words = fragments.flatMap((f) => wordsOf(f));
  if (words.length >= 3 && words.filter((w) => facts.words.has(w)).length >= words.length * 0.8)
    return "grounded";
  return "ungrounded";
}

/** A token that names a value rather than an ordinary word: a number, an id, a code, a name. */
export function valueKind(token: string): "number" | "identifier" | "name" | null {
  if (commonTokens.has(token.toLowerCase())) return null;
  if (/^\d[\d,]*(?:\.\d+)?%?$/.test(token)) {
    const digits = token.replace(/[^\d]/g, "");
    return digits.length >= 2 || token.includes(".") ? "number" : null;
  }
  if (/\d/.test(token) && /\p{L}/u.test(token)) return "identifier";
  if (/[_]/.test(token) || /\p{L}\.\p{L}/u.test(token)) return "identifier";
  // An inner capital (WebSurfer, getUserDetails): a name someone gave a thing.
  if (/^\p{Lu}?\p{Ll}+\p{Lu}/u.test(token)) return "name";
  // All capitals (NYSE, SFO): counted only when the trace has it, being as often plain acronyms.
  if (/^\p{Lu}{3,}$/u.test(token)) return "name";
  return null;
}

export function valueFound(token: string, facts: TraceFacts): Grounding {
  const lower = token.toLowerCase();
  const plain = lower.replace(/,/g, "").replace(/%$/, "");
  return locate((text) => text.includes(lower) || (plain !== lower && text.includes(plain)), facts);
}

/**
 * A number too short or too common to tell a run from another ("2", "15", a score such as "0.38"):
 * it grounds nothing either way.
 */
const shortNumber = (token: string) => /^\d{1,2}$/.test(token) || /^0?\.\d{1,2}$/.test(token);

/** Sentences of a text, never cut inside a quotation (a quoted error has its own full stops). */
function sentencesOf(text: string): string[] {
  const quoted = [...text.matchAll(quotePattern)].map((m) => [m.index, m.index + m[0].length] as const);
  const inside = (at: number) => quoted.some(([from, to]) => at > from && at < to);
  const sentences: string[] = [];
  let start = 0;
  for (const boundary of text.matchAll(/(?<=[.!?;:])\s+(?=[\p{Lu}\d"“(])|\n+/gu)) {
    if (inside(boundary.index)) continue;
    sentences.push(text.slice(start, boundary.index));
    start = boundary.index + boundary[0].length;
  }
  sentences.push(text.slice(start));
  return sentences.map((s) => s.trim()).filter(Boolean);
}

interface Found {
  grounded: Set<string>;
  ungrounded: Set<string>;
  where: boolean;
  what: boolean;
}

/** What one sentence grounds: any specific, and specifics of the run's content (a step, a value, a quote). */
interface SentenceSpecifics {
  any: number;
  content: number;
}

function specificsOf(sentence: string, facts: TraceFacts, found: Found): SentenceSpecifics {
  let groundedHere = 0;
  let contentHere = 0;
  const ground = (label: string, grounding: Grounding, kind: "where" | "what") => {
    if (grounding === "grounded") {
      found.grounded.add(label);
      found[kind] = true;
      groundedHere += 1;
      // An agent's or a tool's name alone says who, not what their step held.
      if (kind === "what" || label.startsWith("step ") || /\d/.test(label)) contentHere += 1;
    } else if (grounding === "ungrounded") found.ungrounded.add(label);
  };
  const lower = sentence.toLowerCase();
  const boundary = (c: string | undefined) => c === undefined || !/[\p{L}\p{N}_]/u.test(c);
  const namesHere = [...facts.names].filter((name) => {
    const at = lower.indexOf(name);
    return at >= 0 && boundary(lower[at - 1]) && boundary(lower[at + name.length]);
  });
  for (const name of namesHere) ground(name, "grounded", "where");
  const stepNumbers = new Set<string>();
  for (const match of sentence.matchAll(stepList))
    for (const n of (match[1] ?? "").match(/\d+/g) ?? []) stepNumbers.add(n);

  const valuesHere: string[] = [];
  let rest = sentence;
  for (const match of sentence.matchAll(quotePattern)) {
    const quote = match[1] ?? match[2] ?? match[3] ?? match[4] ?? "";
    rest = rest.replace(match[0], " ");
    const asName = quote.toLowerCase();
    if (facts.names.has(asName) || facts.stepIds.has(asName)) continue;
    const grounding = quoteFound(quote, facts);
    if (grounding === "grounded") valuesHere.push(asName.split(/…|\.\.\./)[0]?.trim() ?? asName);
    ground(`"${quote.length > 60 ? `${quote.slice(0, 59)}…` : quote}"`, grounding, "what");
  }
  for (const token of rest.match(/[\p{L}\p{N}$]+(?:[._\-/,][\p{L}\p{N}]+)*%?/gu) ?? []) {
    const bare = token.replace(/^\$/, "");
    const lowerToken = bare.toLowerCase();
    if (facts.stepIds.has(lowerToken) && /\d/.test(lowerToken)) {
      ground(bare, "grounded", "where");
      continue;
    }
    if (stepNumbers.has(bare) || facts.names.has(lowerToken) || shortNumber(bare)) continue;
    const kind = valueKind(bare);
    if (!kind) continue;
    const grounding = valueFound(bare, facts);
    // An unknown capitalised word may be an ordinary acronym: only a found one counts.
    if (kind === "name" && grounding === "ungrounded" && !/\p{Ll}/u.test(bare)) continue;
    if (grounding === "grounded") valuesHere.push(lowerToken);
    ground(bare, grounding, "what");
  }

  // "Step 12 (WebSurfer) clicked 'X'": a step counts when what the sentence says of it is in that
  // step (or next to it); one the trace does not have, or that names another agent, is ungrounded.
  for (const n of stepNumbers) {
    const index = Number(n);
    if (index >= facts.stepCount) {
      ground(`step ${n}`, "ungrounded", "where");
      continue;
    }
    const near = [facts.steps[index - 1], facts.steps[index], facts.steps[index + 1]].filter(
      (step): step is TraceFacts["steps"][number] => step !== undefined,
    );
    const agrees = near.some(
      (step) =>
        namesHere.some((name) => step.actor === name || step.tool === name) ||
        valuesHere.some((value) => value.length >= 3 && step.text.includes(value)),
    );
    if (agrees) ground(`step ${n}`, "grounded", "where");
    else if (namesHere.some((name) => facts.steps.some((step) => step.actor === name)))
      ground(`step ${n}`, "ungrounded", "where");
  }
  return { any: groundedHere, content: contentHere };
}

export function assessGroundedDepth(
  analysis: string,
  facts: TraceFacts,
  config: QualityConfig["depth"],
  attribution?: Pick<Attribution, "stepIndex">,
): GroundedDepth {
  const found: Found = { grounded: new Set(), ungrounded: new Set(), where: false, what: false };
  let mechanism = false;
  let assumption = false;
  let admitsNoCause = false;
  let previousContent = false;
  // A stored analysis is at most 4,000 characters; `reflector score` takes any text, read this far.
  for (const sentence of sentencesOf(analysis.slice(0, maxAnalysisChars))) {
    const here = specificsOf(sentence, facts, found);
    const groundedHere = here.any > 0;
    // A mechanism is about the run's content: a step, a value or a quote of it, in the sentence or
    // the one before; an agent's name beside "led to" is not how a step's content led anywhere.
    const anchored = here.content > 0 || previousContent;
    // Cues inside quoted trace text are the trace's words, not the analysis' reasoning.
    const own = sentence.replace(quotePattern, " ");
    previousContent = here.content > 0;
    if (noCauseAdmission.test(own)) {
      admitsNoCause = true;
      continue;
    }
    // A sentence whose only cause is an assumption it does not name ("assumed its reasoning was
    // sound, and that incorrect assumption led to the answer") states neither a mechanism nor a
    // decision; one that also names what was assumed ("assumed the default timeout would hold") does.
    vagueAssumption.lastIndex = 0;
    const vague = vagueAssumption.test(own);
    const named = own.replace(vagueAssumption, " ");
    if ((vague && !assumptionCue.test(named)) || rulesOut.test(own)) continue;
    if (anchored && mechanismCue.test(own)) mechanism = true;
    // The decision or assumption must be named where the run's specifics are.
    if (groundedHere && assumptionCue.test(named)) assumption = true;
  }
  const g = config.grounded;
  const grounded = [...found.grounded];
  const ungrounded = [...found.ungrounded];
  const blamed = attribution?.stepIndex;
  const blamesOutsideTeam = blamed !== undefined && facts.outsideTeam.has(blamed) ? blamed : null;
  const result = (level: DepthLevel, score: number): GroundedDepth => ({
    score,
    level,
    grounded,
    ungrounded,
    where: found.where,
    what: found.what,
    mechanism,
    assumption,
    blamesOutsideTeam,
    admitsNoCause,
  });
  if (analysis.length < config.shortLengthChars) return result("surface", config.shortScore);
  const fabricated =
    ungrounded.length >= g.minUngroundedToDoubt &&
    ungrounded.length >= g.maxUngroundedShare * (grounded.length + ungrounded.length);
  let level: DepthLevel;
  if (grounded.length === 0 || fabricated || blamesOutsideTeam !== null || admitsNoCause) level = "surface";
  else if (!(found.where && found.what) || !mechanism) level = "shallow";
  else if (!assumption || grounded.length < g.minGroundedForDeep) level = "medium";
  else level = "deep";
  const lengthBonus = Math.min(config.maxLengthBonus, analysis.length / config.lengthBonusChars);
  return result(level, Math.min(1, config.levels[level] + lengthBonus));
}

/**
 * How surely an analysis is about this run, from its specifics: the share found in the trace, for
 * an analysis that reached the "why" level (where, what and a grounded mechanism); 0 otherwise.
 */
export function groundedRelevance(depth: GroundedDepth): number {
  if (depth.level !== "medium" && depth.level !== "deep") return 0;
  return depth.grounded.length / Math.max(1, depth.grounded.length + depth.ungrounded.length);
}

/** What a grounded depth below the threshold lacks, in words a generator can act on. */
export function depthShortfall(depth: GroundedDepth): string {
  if (depth.grounded.length === 0)
    return "It names nothing this trace holds (no step, agent, tool, quoted value or identifier of it).";
  const named = `Grounded in the trace: ${depth.grounded.slice(0, 4).map(quotable).join(", ")}`;
  if (depth.blamesOutsideTeam !== null)
    return `${named}; but it blames step ${String(depth.blamesOutsideTeam)}, which no agent of the team produced (the user's message or the task): name the agent's step that went wrong.`;
  if (depth.admitsNoCause)
    return `${named}; but it says the cause is not visible: an analysis earns "why" by stating how a specific step's content led to the failure.`;
  if (depth.level === "surface")
    return `${named}; but more of its specifics are not in this trace (${depth.ungrounded.slice(0, 3).map(quotable).join(", ")}): it reads as the analysis of another run.`;
  const missing = [
    depth.where ? "" : "where it went wrong (the step, agent or tool)",
    depth.what ? "" : "the value or claim involved, quoted from the trace",
    depth.mechanism ? "" : "what that led to and why (the mechanism), next to those specifics",
    depth.assumption ? "" : "the decision or assumption behind it",
  ].filter(Boolean);
  return `${named}; missing: ${missing.join("; ") || "more of the trace's specifics"}.`;
}
