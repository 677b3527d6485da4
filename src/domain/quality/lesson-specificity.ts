import type { Reflection } from "../contracts/index.js";
import { quoteFound, quotePattern, valueFound, valueKind } from "./grounded-depth.js";
import type { TraceFacts } from "./trace-facts.js";

/**
 * Whether a lesson is about this failure or would read the same for any failure of the same tool.
 * A lesson (strategy, adjustments, learning) that names only the tool, the agent and the tool's
 * argument names ("before `book_reservation`, read back `flights`, `payment_id` to the user")
 * fits every failure of that tool: it says nothing about what went wrong here. A lesson about
 * the cause carries something of this failure:
 *
 * - a **value** the run shows: a number, an identifier or a name found in the run's own steps
 *   (`HAT041`, `gift_card_9823297`, `FileNotFoundError`, `step-6`), not only in the task statement;
 * - a **quoted text** found in the run (an error the tool returned, a label it used);
 * - a **condition or rule with a value**: a comparison or assignment to something concrete
 *   (`total_baggages = 0`, `distance <= 0.25 miles`, `reason in {health, weather}`), or the
 *   same in words (`the code must be NY.GNS.ICTR.ZS`, `at most 2 retries`, `within 24h`).
 *
 * The interface's vocabulary grounds nothing: the trace's agents and tools by name and the field
 * names of its structured data are what any lesson about the same tool would name. Nor does the
 * task statement (its names, its numbers): restating the request is not reading the run. Short
 * numbers ("2", "15") are in every run and count only inside a condition.
 */
export interface LessonSpecificity {
  /** What of this failure the lesson carries, as written in it (at most a few). */
  specifics: string[];
}

/** Upper-case words that are emphasis, not names ("insurance AND the reason"). */
const emphasis = new Set([
  "and",
  "or",
  "not",
  "if",
  "then",
  "all",
  "any",
  "only",
  "never",
  "must",
  "no",
  "none",
]);

/** A comparison or assignment to a value: `= 0`, `<= 0.25`, `!= business`, `in {health, weather}`. */
const condition =
  /(?:(?<=[\p{L}\p{N}_)\]\s])(?:=|==|!=)|(?<=[\p{N})\]\s])(?:<=?|>=?)|≤|≥)\s*(?:['"`]?[\p{L}\p{N}$][\p{L}\p{N}_.\-:%]*|\(|\[)|\b(?:in|not in)\s*[{[]\s*['"`]?[\p{L}\p{N}]/u;

/**
 * A capitalised word inside a sentence (`the exact Wiktionary entry`, `a Help: page`): a name the
 * writer gave a thing. At the start of a sentence, a list item or after a colon, it is only grammar.
 */
function properName(text: string, at: number, token: string): boolean {
  if (!/^\p{Lu}\p{Ll}{2,}$/u.test(token)) return false;
  const before = text.slice(Math.max(0, at - 3), at);
  return /[\p{L}\p{N},)][ \t]+$/u.test(before);
}

/**
 * The same rule in words: `must be NY.GNS.ICTR.ZS`, `at most 2`, `within 24h`, `more than 3 hours`.
 * The value must look like one (a number, or an identifier with a digit, `_` or `.` in it).
 */
const verbalRule =
  /\b(?:(?:must|should|has to|have to)(?: not)? (?:be|equal|match|use|include|read|show)|equals?|at (?:most|least)|(?:more|less|fewer|no more|no less|other) than|within|up to|exactly)\s+['"`]?(?:\d|[\p{L}\p{N}]+[_.][\p{L}\p{N}])/u;

const maxLessonChars = 8_000;
const maxSpecifics = 6;
/** Value-like tokens of a lesson looked up in the run; past these, none is. */
const maxLookups = 48;

export function lessonSpecificity(
  lesson: Pick<Reflection, "strategyText" | "adjustments" | "learning">,
  facts: TraceFacts,
): LessonSpecificity {
  const interfaceWord = (word: string) => facts.names.has(word) || facts.fields.has(word);
  // What the task statement says, the run repeats: it is still the request, not the run.
  const inStatement = (lower: string) =>
    lower
      .split(/…|\.\.\./)
      .map((part) => part.replace(/\s+/g, " ").trim())
      .filter((part) => part.length >= 2)
      .every((part) => facts.statement.includes(part));
  const text = [lesson.strategyText ?? "", ...lesson.adjustments, lesson.learning]
    .join("\n")
    .slice(0, maxLessonChars);
  const specifics: string[] = [];
  const add = (found: string) => {
    if (specifics.length < maxSpecifics && !specifics.includes(found)) specifics.push(found);
  };
  let lookups = 0;
  let rest = text;
  for (const match of text.matchAll(quotePattern)) {
    const quote = match[1] ?? match[2] ?? match[3] ?? match[4] ?? "";
    rest = rest.replace(match[0], " ");
    const lower = quote.toLowerCase();
    // A quoted tool or argument name (`book_reservation`, `flights, payment_id`) is interface.
    const words = lower.split(/[\s,;/]+/).filter(Boolean);
    if (words.length === 0 || words.every(interfaceWord)) continue;
    if (condition.test(quote)) add(quote);
    // A lookup reads the whole run (megabytes): a lesson gets a bounded number of them.
    else if ((lookups += 1) > maxLookups) continue;
    else if (quoteFound(quote, facts) === "grounded" && !inStatement(lower))
      add(`"${quote.length > 40 ? `${quote.slice(0, 39)}…` : quote}"`);
  }
  for (const line of rest.split("\n")) {
    const rule = condition.exec(line) ?? verbalRule.exec(line);
    if (rule) add(line.slice(Math.max(0, rule.index - 30), rule.index + rule[0].length).trim());
  }
  // Each distinct token is looked up in the run once, and the search ends once enough are found.
  const checked = new Set<string>();
  for (const match of rest.matchAll(/[\p{L}\p{N}$]+(?:[._\-/,][\p{L}\p{N}]+)*%?/gu)) {
    if (specifics.length >= maxSpecifics) break;
    const token = match[0];
    const bare = token.replace(/^\$/, "");
    const lower = bare.toLowerCase();
    if (checked.has(bare)) continue;
    checked.add(bare);
    if (interfaceWord(lower) || emphasis.has(lower) || /^\d{1,2}$/.test(bare)) continue;
    if (facts.stepIds.has(lower) && /\d/.test(lower)) {
      add(bare);
      continue;
    }
    const kind = valueKind(bare) ?? (properName(rest, match.index, bare) ? "name" : null);
    if (!kind) continue;
    if ((lookups += 1) > maxLookups) break;
    if (valueFound(bare, facts) === "grounded" && !inStatement(lower)) add(bare);
  }
  return { specifics };
}
