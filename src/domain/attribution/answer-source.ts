import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { collapseWhitespace, normalise } from "./trace-scan.js";

/**
 * Where a wrong final answer came from: the first step, before the final one, that states the
 * answer's value. A wrong answer is explained by its source, not by whatever else went wrong in
 * the trace: a page that refused to load and was replaced by another is not why the answer is
 * wrong, the step that read the wrong row is.
 *
 * "States the value" is literal, and linear in the text:
 * - when the answer holds numbers (figures, dates, prices), a step states it when it holds every
 *   one of them, compared as numbers ("1,349.00" is 1349; "734.0" is 734); numbers the task's own
 *   question holds are given, not produced, and do not count;
 * - otherwise a step states it when it holds the answer's text (at most its first 80 characters),
 *   whitespace and case aside, unless the question itself holds that text.
 */

/** At most this many numbers of the answer are looked for; an answer is rarely a table. */
const maxAnswerNumbers = 6;
const phraseMaxChars = 80;
const phraseMinChars = 4;

const isDigit = (code: number) => code >= 48 && code <= 57;
/** ASCII letters only: a currency sign (€476, £902.14) is not a name glued to a number. */
const isLetter = (code: number) => (code >= 97 && code <= 122) || (code >= 65 && code <= 90);

/**
 * The numbers in `text`, as canonical strings: runs of digits joined by single separators
 * (`1,349.00`, `2022-12-24`, `09:00`, `07/09/2020`, `2024-04-01T08:00:00Z`). Plain figures become their value (commas
 * are thousands separators, trailing zero decimals dropped); dates and times stay as written.
 * One pass; a number glued to letters ("v2", "x86") is a name, not a figure, and is skipped.
 */
export function numbersIn(text: string, limit = Number.POSITIVE_INFINITY): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length && out.length < limit) {
    if (!isDigit(text.charCodeAt(i))) {
      i += 1;
      continue;
    }
    const start = i;
    let plain = true;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (isDigit(code)) {
        i += 1;
        continue;
      }
      // A separator counts only between two digits; T joins an ISO 8601 date to its time.
      const sep = code === 44 || code === 46 || code === 45 || code === 47 || code === 58 || code === 84; // , . - / : T
      if (sep && i + 1 < text.length && isDigit(text.charCodeAt(i + 1)) && isDigit(text.charCodeAt(i - 1))) {
        if (code !== 44 && code !== 46) plain = false;
        i += 1;
        continue;
      }
      break;
    }
    const raw = text.slice(start, i);
    const before = start > 0 ? text.charCodeAt(start - 1) : 32;
    const after = i < text.length ? text.charCodeAt(i) : 32;
    const utc = after === 90 && raw.includes("T"); // 2024-04-01T08:00:00Z
    if (isLetter(before) || (isLetter(after) && !utc)) continue;
    out.push(plain ? canonicalFigure(raw) : raw);
  }
  return out;
}

function canonicalFigure(raw: string): string {
  const value = Number(raw.replace(/,/g, ""));
  return Number.isFinite(value) ? String(value) : raw;
}

export interface AnswerValue {
  /** Canonical numbers the answer holds that its question does not. */
  numbers: string[];
  /** The answer's text, normalised, when it holds no such number. */
  phrase: string | null;
}

/** What to look for: the task's recorded answer, or else a short final step's text. */
export function answerValue(event: TaskCompleted): AnswerValue | null {
  const final = event.events[event.events.length - 1];
  const answer = event.task.answer ?? (final && final.content.length <= 400 ? final.content : undefined);
  if (answer === undefined) return null;
  const text = answer.slice(0, 400);
  const question = event.task.description.slice(0, 20_000);
  const given = new Set(numbersIn(question));
  const numbers = [...new Set(numbersIn(text))].filter((n) => !given.has(n)).slice(0, maxAnswerNumbers);
  if (numbers.length > 0) return { numbers, phrase: null };
  const phrase = normalise(text).slice(0, phraseMaxChars).trim();
  if (phrase.length < phraseMinChars || normalise(question).includes(phrase)) return null;
  return { numbers: [], phrase };
}

/** Whether `step` states the answer's value. Linear in the step's text. */
export function statesAnswer(step: TraceEvent, value: AnswerValue): boolean {
  const content = step.content;
  if (value.numbers.length > 0) {
    const wanted = new Set(value.numbers);
    for (const n of numbersIn(content)) {
      wanted.delete(n);
      if (wanted.size === 0) return true;
    }
    return false;
  }
  if (value.phrase === null) return false;
  const lower = content.toLowerCase();
  return lower.includes(value.phrase) || collapseWhitespace(lower).includes(value.phrase);
}
