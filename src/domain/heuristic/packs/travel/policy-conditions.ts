import { isWriteTool } from "../../../attribution/state-change.js";
import type { TaskCompleted } from "../../../contracts/index.js";
import { isObject, parsedStep, userActor } from "../../argument-sources.js";
import {
  field,
  hasStem,
  negative,
  norm,
  scopeOf,
  short,
  stem,
  timeOf,
  toNumber,
  valueSaid,
  wordsOf,
  type PolicyBreach,
  type Scope,
} from "./policy-scope.js";
import { windowBreach } from "./policy-window.js";

export type { PolicyBreach } from "./policy-scope.js";
export { policySentences } from "../../policy-text.js";
import { allPolicySentences, policySentencesByStem } from "../../policy-text.js";

/**
 * A condition the policy in the trace's system text states for a state-changing call, and the
 * values from the trace that show the call did not meet it. Only conditions of a few shapes are
 * read, each from the policy's own words (its numbers, classes and tiers), never from a list
 * kept here:
 * - a time window: "can be cancelled within 24 hours of booking, or if …", with an "Otherwise, …
 *   can be cancelled only if <X> is bought …, and <class> … can always be cancelled" that follows
 *   it; a breach needs the record's time, the policy's current time, a class the sentence names
 *   and not the one it exempts, no word of the alternative anywhere in the user's words or the
 *   tools' output (the replies to the agent's own writes aside), and <X> recorded as absent — or,
 *   when the sentence adds "and the condition is met", <X> present but the user's stated reason
 *   one the policy lists ("change of plan") that is clearly not among those the policy's sentence
 *   about <X> covers ("… given health or weather reasons"; policy-window.ts);
 * - an allowance: "N free <thing> for each <class> <unit>", per "is a <tier> member" when the
 *   sentence says so: the call's charged count of the thing must be the total less the free ones;
 * - an amount: "the amount being $A times the number of <unit>s", for a tool named after what
 *   the sentence offers (`send_certificate`, "offer a certificate"): the call's amount must be A
 *   times a count of those units in a record the call is about;
 * - a prohibition: "Do not <verb> if <term> and <term> …": every term met by a value of the
 *   records the call is about ("is regular member" by `membership = regular`, "has no travel
 *   insurance" by `insurance = no`).
 * The records a call is about are its arguments, the latest output of each tool that holds one of
 * its ids (or was called with it), and, one step on, the latest output of each tool about an id in
 * those (a reservation's `user_id` leads to the user's profile). Whatever cannot be read or is
 * missing means no breach: a condition is claimed broken only when every value it needs is seen.
 */

/** "N free <thing> for each <class> <unit>" (per "is a <tier> member"): the charged count. */
function allowanceBreach(sentence: string, scope: Scope): PolicyBreach | null {
  const entries: { tier?: string; cls: string; unit: string; free: number; thing: string }[] = [];
  const re =
    /\b(\d{1,2}|zero|one|two|three|four|five) free ([a-z]{1,20}(?: [a-z]{1,20})?) (?:for|per) (?:each |every )?([a-z]{1,20}(?: [a-z]{1,20})?) ([a-z]{1,20})\b/gi;
  for (const m of sentence.matchAll(re)) {
    const before = sentence.slice(0, m.index);
    const tiers = [...before.matchAll(/\bis an? ([a-z]{1,20}) member\b/gi)];
    const tier = tiers.at(-1)?.[1]?.toLowerCase();
    entries.push({
      ...(tier ? { tier } : {}),
      free: toNumber(m[1] ?? ""),
      thing: m[2] ?? "",
      cls: (m[3] ?? "").toLowerCase(),
      unit: m[4] ?? "",
    });
  }
  const first = entries[0];
  if (!first) return null;
  const thingStems = wordsOf(first.thing).map(stem);
  const numeric = (v: unknown) => typeof v === "number" || (typeof v === "string" && /^\d+$/.test(v));
  const charged = Object.entries(scope.args).find(
    ([k, v]) =>
      numeric(v) && /non.?free|extra|paid|charged/i.test(k) && wordsOf(k).some((w) => hasStem(thingStems, w)),
  );
  const total = Object.entries(scope.args).find(
    ([k, v]) => numeric(v) && /total/i.test(k) && wordsOf(k).some((w) => hasStem(thingStems, w)),
  );
  if (!charged || !total) return null;
  const tiers = [...new Set(entries.flatMap((e) => (e.tier ? [e.tier] : [])))];
  const tier = tiers.length ? valueSaid(scope, tiers) : undefined;
  if (tiers.length && !tier) return null;
  const classes = [...new Set(entries.map((e) => e.cls))];
  // The exact class: `basic_economy` is "basic economy", never "economy".
  let cls: { name: string; value: unknown } | undefined;
  for (const o of [scope.args, ...scope.records]) {
    const hit = Object.entries(o).find(([, v]) => typeof v === "string" && classes.includes(norm(v)));
    if (hit) {
      cls = { name: hit[0], value: hit[1] };
      break;
    }
  }
  if (!cls) return null;
  const entry = entries.find((e) => e.cls === norm(cls.value) && (!tier || e.tier === norm(tier.value)));
  if (!entry || entry.free < 0) return null;
  const units = field(scope, [stem(entry.unit)], Array.isArray);
  if (!units || !Array.isArray(units.value) || units.value.length === 0) return null;
  const count = units.value.length;
  const expected = Math.max(0, Number(total[1]) - entry.free * count);
  if (Number(charged[1]) === expected) return null;
  return {
    sentence: short(sentence, 320),
    values: [
      ...(tier ? [`\`${tier.name}\` = \`${tier.value}\``] : []),
      `\`${cls.name}\` = \`${String(cls.value)}\``,
      `${String(count)} ${units.name}`,
      `\`${total[0]}\` = ${String(total[1])}`,
      `\`${charged[0]}\` = ${String(charged[1])}`,
    ],
    required: `${String(entry.free)} free per ${entry.unit}, so \`${charged[0]}\` = ${String(Number(total[1]))} − ${String(entry.free)} × ${String(count)} = ${String(expected)}`,
  };
}

/** "the amount being $A times the number of <unit>s", for a tool named after what is offered. */
function amountBreach(sentences: string[], scope: Scope, objectStems: string[]): PolicyBreach | null {
  const amount = Object.entries(scope.args).find(
    ([k, v]) => /amount/i.test(k) && (typeof v === "number" || /^\d+(\.\d+)?$/.test(String(v))),
  );
  if (!amount || objectStems.length === 0) return null;
  const rules: { sentence: string; per: number; unit: string }[] = [];
  for (const s of sentences) {
    if (!wordsOf(s).some((w) => hasStem(objectStems, w))) continue;
    const m = /amount (?:being|of|is) \$?(\d+(?:\.\d+)?) times the number of ([a-z]+)/i.exec(s);
    if (m) rules.push({ sentence: s, per: Number(m[1]), unit: m[2] ?? "" });
  }
  const first = rules[0];
  if (!first) return null;
  const units = field(scope, [stem(first.unit)], Array.isArray);
  if (!units || !Array.isArray(units.value) || units.value.length === 0) return null;
  const count = units.value.length;
  const allowed = rules.map((r) => r.per * count);
  if (allowed.includes(Number(amount[1]))) return null;
  return {
    sentence: short(rules.map((r) => r.sentence).join(" "), 320),
    values: [`\`${amount[0]}\` = ${String(amount[1])}`, `${String(count)} ${units.name}`],
    required: `\`${amount[0]}\` = ${allowed.map((a, i) => `$${String(rules[i]?.per ?? 0)} × ${String(count)} = ${String(a)}`).join(" or ")}`,
  };
}

/** "Do not <verb> if <term> and <term> …", every term met by the records' values. */
function prohibitionBreach(sentence: string, scope: Scope, verbStems: string[]): PolicyBreach | null {
  const m = /\bdo not ([a-z]+)(?: [a-z]+)? if (.+?)[.;]?$/i.exec(sentence);
  if (!m || !hasStem(verbStems, m[1] ?? "")) return null;
  const terms = (m[2] ?? "")
    .split(/,|\band\b/)
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  const values: string[] = [];
  for (const term of terms) {
    const no = /\bno ([a-z ]+)/i.exec(term);
    if (no) {
      const f = field(scope, wordsOf(no[1] ?? "").map(stem));
      if (!f || !negative(f.value)) return null;
      values.push(`\`${f.name}\` = \`${String(f.value)}\``);
      continue;
    }
    // "flies (basic) economy": with and without the bracketed word.
    const phrases = [term.replace(/[()]/g, ""), term.replace(/\([^()]{0,40}\)/g, "").replace(/\s+/g, " ")];
    const v = valueSaid(scope, phrases);
    if (!v) return null;
    values.push(`\`${v.name}\` = \`${v.value}\``);
  }
  return { sentence: short(sentence), values, required: `no ${m[1] ?? "action"} when all of these hold` };
}

/**
 * The policy condition the state-changing call at `index` visibly did not meet, or null. `verbs`
 * are the words a policy uses for the tool's action (`send` → compensate, certificate, …).
 */
export function policyBreach(
  event: TaskCompleted,
  index: number,
  verbs: readonly string[],
): PolicyBreach | null {
  const step = event.events[index];
  const args = step ? parsedStep(event, index) : null;
  if (!step?.toolName || !isObject(args)) return null;
  const before = event.events.slice(0, index);
  const policy = before
    .filter((e) => e.type === "system_event" || e.actor === "system")
    .map((e) => e.content)
    .join("\n");
  if (policy.length === 0) return null;
  // What the user said and the tools returned, the agent's own writes' replies aside: a
  // reservation the agent cancelled says "cancelled" without the airline having cancelled anything.
  const seenText = before
    .filter(
      (e) =>
        (e.type === "tool_response" && !isWriteTool(e.toolName)) ||
        (e.actor !== undefined && userActor.test(e.actor)),
    )
    .map((e) => e.content)
    .join("\n");
  const userText = before
    .filter((e) => e.actor !== undefined && userActor.test(e.actor))
    .map((e) => e.content)
    .join("\n");
  const scope = scopeOf(event, index, args);
  const toolWords = wordsOf(step.toolName);
  const verb = toolWords[0] ?? "";
  const verbStems = [verb, ...verbs].map(stem);
  const objectStems = toolWords.slice(1).map(stem);
  const now = timeOf(
    /current time is (\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?)/i.exec(policy)?.[1] ?? "",
  );
  const sentences = policySentencesByStem(policy, verbStems);
  const allSentences = allPolicySentences(policy);
  for (let i = 0; i < sentences.length; i += 1) {
    const found =
      windowBreach(sentences, i, scope, verb, now, seenText, allSentences, userText) ??
      allowanceBreach(sentences[i] ?? "", scope) ??
      prohibitionBreach(sentences[i] ?? "", scope, verbStems);
    if (found) return found;
  }
  return amountBreach(sentences, scope, objectStems);
}
