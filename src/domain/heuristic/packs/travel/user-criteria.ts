import type { TaskCompleted } from "../../../contracts/index.js";
import { sentencesOf, userActor } from "../../argument-sources.js";

/**
 * What the user asked of the option they want, read from their own words (never from a list of
 * tasks): a price rank ("the cheapest", "the second cheapest"), "nonstop", time bounds on the
 * departure or the arrival ("arrive before 7am", "not before 11am"), the shortest travel time, the
 * earliest or latest flight, and the classes they named. See choice-criteria.ts for how they are
 * checked against the agent's own search results.
 */
export type Side = "departure" | "arrival";
export interface Bound {
  on: Side;
  op: "before" | "after";
  minutes: number;
  words: string;
}
export interface Criteria {
  rank?: number;
  direct: boolean;
  bounds: Bound[];
  fastest: boolean;
  extreme?: { on: Side; which: "earliest" | "latest" };
  classes: Set<string>;
  sentences: string[];
}

const ordinals: Record<string, number> = { second: 2, "2nd": 2, third: 3, "3rd": 3 };
const negation = /\b(not|never|avoid|rather than|other than)\b|n't\b/i;
const priceWords =
  /\b(?:(second|third|2nd|3rd)[\s-]+)?(?:cheapest|lowest[\s-]priced|least expensive|lowest (?:fare|price|cost))\b/gi;
const directWord = /\b(non[\s-]?stop|direct)\b(?![\s-]+(?:me|you|us|them|to|line|debit|deposit)\b)/i;
const stopWords = /\b(one[\s-]stop|connecting|connection|layover|stopover|with a stop)\b/i;
const classWords = /\b(basic economy|economy|business|first class)\b/gi;
const timePattern =
  /\b(not before|no earlier than|not earlier than|not after|no later than|not later than|earlier than|later than|before|after|by)\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm|noon|midnight)?\b/gi;
const sideWords: [RegExp, Side][] = [
  [/\b(arriv\w*|land\w*|reach\w*|get there|get in)\b/gi, "arrival"],
  [/\b(depart\w*|leav\w*|fly|flying|take[\s-]?off|takeoff)\b/gi, "departure"],
];

/** "7am" → 420, "11:30 pm" → 1410, "15:00" → 900; undefined when am/pm is not said and the hour < 13. */
function minutesOf(hour: string, minute: string | undefined, half: string | undefined): number | undefined {
  let h = Number(hour);
  const m = minute === undefined ? 0 : Number(minute);
  if (h > 23 || m > 59) return undefined;
  const part = half?.toLowerCase();
  if (part === "noon") return h === 12 ? 720 : undefined;
  if (part === "midnight") return h === 12 ? 0 : undefined;
  if (part === "am" || part === "pm") {
    if (h < 1 || h > 12) return undefined;
    if (h === 12) h = 0;
    return (part === "pm" ? h + 12 : h) * 60 + m;
  }
  return h >= 13 && minute !== undefined ? h * 60 + m : undefined;
}

/** The side (departure or arrival) named last before `at` in the sentence, if any. */
function sideBefore(sentence: string, at: number): Side | undefined {
  let best: { at: number; side: Side } | undefined;
  for (const [re, side] of sideWords)
    for (const m of sentence.slice(0, at).matchAll(re))
      if (!best || m.index > best.at) best = { at: m.index, side };
  return best?.side;
}

/** The criteria one sentence states (empty fields when it states none). */
function criteriaOf(sentence: string): Partial<Criteria> & { any: boolean; dropsDirect: boolean } {
  const out: Partial<Criteria> & { any: boolean; dropsDirect: boolean } = { any: false, dropsDirect: false };
  const lower = sentence.toLowerCase();
  const prices = [...lower.matchAll(priceWords)];
  const ordinal = prices.find((m) => m[1] !== undefined);
  if (ordinal) out.rank = ordinals[ordinal[1]?.toLowerCase() ?? ""];
  else if (prices.length > 0 && !negation.test(lower)) out.rank = 1;
  const direct = directWord.exec(lower);
  if (direct) {
    const before = lower.slice(Math.max(0, direct.index - 24), direct.index);
    if (/\b(not|no|no need|needn't|doesn't|don't|not necessarily)\b/.test(before)) out.dropsDirect = true;
    else out.direct = true;
  } else if (stopWords.test(lower) && !negation.test(lower)) out.dropsDirect = true;
  if (!/\b(any ?time|doesn't matter|does not matter|don't care)\b/.test(lower)) {
    const bounds: Bound[] = [];
    for (const m of lower.matchAll(timePattern)) {
      const minutes = minutesOf(m[2] ?? "", m[3], m[4]);
      const on = sideBefore(lower, m.index);
      if (minutes === undefined || !on) continue;
      const word = m[1] ?? "";
      const op = /^(before|by|earlier than|not after|no later than|not later than)$/.test(word)
        ? "before"
        : "after";
      bounds.push({ on, op, minutes, words: m[0] });
    }
    if (bounds.length) out.bounds = bounds;
  }
  if (
    /\b(fastest|shortest|quickest)\b(?![\s-]+(?:\w+[\s-]+)?(?:layover|connection|stop|stopover|wait))/.test(
      lower,
    )
  )
    out.fastest = true;
  const extreme =
    /\b(earliest|latest)\b(?:\s+\w+){0,2}?\s+(flights?|options?|one|available|departures?|arrivals?|departing|arriving)\b/.exec(
      lower,
    );
  if (extreme && !/\b(at the (earliest|latest)|earliest convenience)\b/.test(lower))
    out.extreme = {
      which: extreme[1] === "latest" ? "latest" : "earliest",
      on: extreme[0].includes("arriv") ? "arrival" : "departure",
    };
  const classes = new Set(
    [...lower.replace(/\bnot (a |an )?basic economy\b/g, "").matchAll(classWords)].map((m) => m[1] ?? ""),
  );
  if (classes.size) out.classes = classes;
  out.any =
    out.rank !== undefined ||
    out.direct === true ||
    (out.bounds?.length ?? 0) > 0 ||
    out.fastest === true ||
    out.extreme !== undefined;
  return out;
}

/** Sentences with "a.m."/"p.m." read as one word, so that they do not end a sentence. */
const userSentences = (text: string) =>
  sentencesOf(text.replace(/\b([ap])\.m\./gi, "$1m"))
    .map((s) => s.trim())
    .filter(Boolean);

/** The criteria the user stated before `index`, and where they last stated one. */
export function userCriteria(event: TaskCompleted, from: number, index: number) {
  const c: Criteria = { direct: false, bounds: [], fastest: false, classes: new Set(), sentences: [] };
  let lastAt = -1;
  for (let i = from; i < index; i += 1) {
    const e = event.events[i];
    if (!e?.actor || !userActor.test(e.actor)) continue;
    for (const sentence of userSentences(e.content)) {
      const s = criteriaOf(sentence);
      for (const cls of s.classes ?? []) c.classes.add(cls);
      if (s.dropsDirect) c.direct = false;
      if (!s.any) continue;
      if (/\b(instead|actually)\b/i.test(sentence)) {
        c.rank = undefined;
        c.direct = false;
        c.bounds = [];
        c.fastest = false;
        c.extreme = undefined;
        c.sentences = [];
      }
      if (s.rank !== undefined) c.rank = s.rank;
      if (s.direct) c.direct = true;
      for (const b of s.bounds ?? []) {
        c.bounds = c.bounds.filter((o) => o.on !== b.on || o.op !== b.op);
        c.bounds.push(b);
      }
      if (s.fastest) c.fastest = true;
      if (s.extreme) c.extreme = s.extreme;
      c.sentences.push(sentence);
      lastAt = i;
    }
  }
  return { criteria: c, lastAt };
}
