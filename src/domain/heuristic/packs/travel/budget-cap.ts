import type { TaskCompleted } from "../../../contracts/index.js";
import { isObject, parsedStep, sentencesOf, userActor, type Json } from "../../argument-sources.js";

/**
 * A write that cost more than the user said they would pay, as the trace shows it: the user's last
 * stated cap ("up to $600", "under $1,000", "as long as the total doesn't exceed $500", "a $200
 * budget") and what the call charged, read from the call itself (a booking's payment amounts) or
 * from its accepted reply (a payment in the record that the latest earlier record of the same id
 * did not have). Nothing is claimed when the charge is not seen, when no cap was stated, or when,
 * after the cap, the agent told the user the amount charged (the user then chose it knowingly).
 */
export interface BudgetMiss {
  /** The user's words that stated the cap. */
  asked: string;
  cap: number;
  charged: number;
  /** Where the charge is seen: the call or its reply. */
  from: "call" | "reply";
  step: number;
}

const money = (s: string) => Number(s.replace(/,/g, ""));

const capBefore =
  /\b(?:up ?to|under|below|less than|no more than|not more than|at most|a maximum of|within|budget (?:of|is)|(?:does ?n[o']t|not) exceed|not to exceed)\s+(?:a |an |my |the |of )?(?:budget of |limit of )?\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?\b/gi;
const capAfter = /\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?\s+(?:budget|limit|cap|maximum|max)\b/gi;

/** The user's last stated cap before `index`, with the sentence and the event it is in. */
function lastCap(event: TaskCompleted, index: number) {
  let found: { cap: number; asked: string; at: number } | undefined;
  for (let i = 0; i < index; i += 1) {
    const e = event.events[i];
    if (!e?.actor || !userActor.test(e.actor)) continue;
    for (const sentence of sentencesOf(e.content)) {
      const hits = [...sentence.matchAll(capBefore), ...sentence.matchAll(capAfter)];
      const last = hits.sort((a, b) => a.index - b.index).at(-1);
      if (last) found = { cap: money(last[1] ?? ""), asked: sentence.trim(), at: i };
    }
  }
  return found;
}

/** The positive amounts of a record's payments (`payment_history[].amount`), as `id:amount` keys. */
function payments(record: unknown): string[] {
  if (!isObject(record)) return [];
  for (const [k, v] of Object.entries(record)) {
    if (!/payment/i.test(k) || !Array.isArray(v)) continue;
    return v.filter(isObject).flatMap((p) => {
      const id = Object.entries(p).find(([key]) => /id$/i.test(key))?.[1];
      return typeof p.amount === "number" ? [`${String(id)}:${String(p.amount)}`] : [];
    });
  }
  return [];
}

/** What the call charged: its own payment amounts (a booking), or the new payments in its reply. */
function chargeOf(
  event: TaskCompleted,
  index: number,
  args: Json,
): { amount: number; from: "call" | "reply" } | null {
  const own = Array.isArray(args.payment_methods)
    ? args.payment_methods.filter(isObject).map((p) => p.amount)
    : [];
  const amounts = own.filter((a): a is number => typeof a === "number");
  if (own.length > 0 && amounts.length === own.length)
    return { amount: amounts.reduce((a, b) => a + b, 0), from: "call" };
  const replyAt = event.events.findIndex((e, i) => i > index && e.type === "tool_response");
  const reply = replyAt > index && replyAt <= index + 2 ? parsedStep(event, replyAt) : null;
  const id = Object.entries(args).find(
    ([k, v]) => /(^|_)id$/i.test(k) && typeof v === "string" && !/payment/i.test(k),
  )?.[1];
  if (!isObject(reply) || typeof id !== "string") return null;
  // The latest earlier record of the same id, to tell the new payments from the old ones.
  let before: unknown = null;
  for (let i = index - 1; i >= 0 && before === null; i -= 1) {
    if (event.events[i]?.type !== "tool_response") continue;
    const r = parsedStep(event, i);
    if (isObject(r) && Object.values(r).includes(id) && payments(r).length > 0) before = r;
  }
  if (before === null) return null;
  const old = [...payments(before)];
  const added: number[] = [];
  for (const p of payments(reply)) {
    const at = old.indexOf(p);
    if (at >= 0) old.splice(at, 1);
    else added.push(Number(p.split(":").at(-1)));
  }
  const charged = added.filter((a) => a > 0).reduce((a, b) => a + b, 0);
  return charged > 0 ? { amount: charged, from: "reply" } : null;
}

/** "12345" as a pattern that also matches "12,345": an optional comma between groups of three. */
function thousandsPattern(digits: string): string {
  const groups: string[] = [];
  for (let end = digits.length; end > 0; end -= 3) groups.unshift(digits.slice(Math.max(0, end - 3), end));
  return groups.join(",?");
}

export function budgetMiss(event: TaskCompleted, index: number): BudgetMiss | null {
  const args = parsedStep(event, index);
  if (!isObject(args)) return null;
  const cap = lastCap(event, index);
  if (!cap) return null;
  const charge = chargeOf(event, index, args);
  if (!charge || charge.amount <= cap.cap) return null;
  // The agent named the amount to the user after the cap: the user chose it knowingly.
  const [whole = "", cents] = String(charge.amount).split(".");
  const grouped = thousandsPattern(whole);
  const amount = new RegExp(`(?<![\\d.,])${grouped}${cents ? `\\.${cents}` : "(?:\\.00)?"}(?![\\d,])`);
  for (let i = cap.at + 1; i < index; i += 1) {
    const e = event.events[i];
    if (e?.type === "llm_response" && !(e.actor && userActor.test(e.actor)) && amount.test(e.content))
      return null;
  }
  return { asked: cap.asked, cap: cap.cap, charged: charge.amount, from: charge.from, step: index };
}
