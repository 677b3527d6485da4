/**
 * What a state-changing call's argument values are read against: the words and numbers of the
 * user's messages and of earlier tool output (counts said in words, dates, sums, the kind of an
 * id such as `gift_card_4421`).
 */
import { says } from "./argument-sources.js";

const numberWords = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** The words of a name (`nonfree_baggages` → nonfree, baggages; `sendCertificate` → send, certificate). */
export const wordsOf = (name: string) =>
  name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean);

/** A word's stem as matched against free text: its first letters (`baggages` and `bags` share `bag`). */
export const stemOf = (word: string) =>
  word
    .replace(/(ages|age|ing|ed|es|s)$/, "")
    .replace(/(.)\1$/, "$1")
    .slice(0, 5);
export const hasStem = (text: string, stem: string) =>
  new RegExp(`(^|[^a-z])${stem}`, "i").test(text) && stem.length >= 3;

/** Whether a value is said in a text, in any of the ways people write it. */
export function mentions(text: string, value: string): boolean {
  if (says(text, value)) return true;
  if (value.includes("_") && (says(text, value.replace(/_/g, " ")) || says(text, value.replace(/_/g, "-"))))
    return true;
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (date) {
    const month = months[Number(date[2]) - 1] ?? "";
    const day = String(Number(date[3]));
    return new RegExp(
      `${month}[a-z]*\\.?\\s+${day}(st|nd|rd|th)?\\b|\\b${day}(st|nd|rd|th)?\\s+(of\\s+)?${month}|\\b${Number(date[2])}/${day}\\b`,
      "i",
    ).test(text);
  }
  return false;
}

/** The count the user last gave for a thing (`three checked bags` → 3, `no baggage` → 0). */
export function userCount(userText: string, stems: string[]): number | undefined {
  let found: number | undefined;
  const re =
    /\b(\d{1,2}|zero|one|two|three|four|five|six|seven|eight|nine|ten|no|any)\s+((?:[a-z-]+\s+){0,2}[a-z]+)/gi;
  for (const m of userText.matchAll(re)) {
    const nouns = (m[2] ?? "").toLowerCase().split(/\s+/);
    if (!nouns.some((noun) => stems.some((s) => noun.startsWith(s)))) continue;
    const raw = (m[1] ?? "").toLowerCase();
    const before = userText.slice(Math.max(0, m.index - 12), m.index).toLowerCase();
    if (raw === "any") {
      if (/(n't|not|never)\s*$/.test(before.trim()) || /n't\s+have\s*$/.test(before)) found = 0;
      continue;
    }
    found = raw === "no" ? 0 : /\d/.test(raw) ? Number(raw) : numberWords.indexOf(raw);
  }
  return found;
}

/** The numbers a text holds, and every sum and difference of two of them (amounts the agent worked out). */
export function derivable(text: string): Set<string> {
  const nums = [...new Set((text.match(/\d+(?:\.\d+)?/g) ?? []).map(Number))].slice(0, 400);
  const out = new Set(nums.map(String));
  for (const a of nums)
    for (const b of nums) {
      out.add(String(Math.round((a + b) * 100) / 100));
      if (a > b) out.add(String(Math.round((a - b) * 100) / 100));
    }
  return out;
}

/** `gift_card_7719` → `gift card`; null for values that are not a kind followed by a number. */
export const kindOf = (value: string) =>
  /^([a-z]+(?:_[a-z]+)*)_\d+$/.exec(value)?.[1]?.replace(/_/g, " ") ?? null;
/** Whether a text names a kind of value in words (`gift card`), not by quoting an id of it (`gift_card_7719`). */
export const saysKind = (text: string, kind: string) =>
  new RegExp(`(^|[^a-z])${kind.replace(/ /g, "[\\s_-]+")}s?(?![a-z]|[_-]?\\d)`, "i").test(text);
/** The kinds of value listed next to a value in tool output (the other payment methods of a profile). */
export function kindsNear(toolText: string, value: string): Set<string> {
  const kinds = new Set<string>();
  for (const at of toolText.matchAll(new RegExp(value, "g"))) {
    const near = toolText.slice(Math.max(0, at.index - 300), at.index + 300);
    for (const token of near.match(/\b[a-z]+(?:_[a-z]+)*_\d+\b/g) ?? []) {
      const kind = kindOf(token);
      if (kind) kinds.add(kind);
    }
  }
  return kinds;
}
