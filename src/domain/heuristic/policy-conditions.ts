import type { TaskCompleted } from "../contracts/index.js";
import { parsedStep, says, userActor } from "./argument-sources.js";

/**
 * A condition the policy in the trace's system text states for a state-changing call, and the
 * values from the trace that show the call did not meet it. Only conditions of a few shapes are
 * read, each from the policy's own words (its numbers, classes and tiers), never from a list
 * kept here:
 * - a time window: "can be cancelled within 24 hours of booking, or if …", with an "Otherwise, …
 *   can be cancelled only if <X> is bought …, and <class> … can always be cancelled" that follows
 *   it; a breach needs the record's time, the policy's current time, a class the sentence names
 *   and not the one it exempts, <X> recorded as absent, and no word of the alternative anywhere in
 *   the user's words or the tools' output;
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
export interface PolicyBreach {
  /** The policy sentence whose condition the call did not meet. */
  sentence: string;
  /** The values from the trace that decide it, as `name = value`. */
  values: string[];
  /** What the condition required, in a few words. */
  required: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const norm = (v: unknown) => String(v).toLowerCase().replace(/[_-]+/g, " ").replace(/\s+/g, " ").trim();
const negative = (v: unknown) => /^(no|false|none|0|)$/.test(norm(v));
const numberWords = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const toNumber = (word: string) =>
  /^\d+$/.test(word) ? Number(word) : numberWords.indexOf(word.toLowerCase());
/** A word's stem as compared here: its first five letters, plural and past endings aside. */
const stem = (word: string) =>
  word
    .toLowerCase()
    .replace(/(ages|age|ies|es|s|led|ed|d)$/, "")
    .slice(0, 5);
/** Two stems of one word: one begins the other (`bag` and `bagg` of baggages). */
const sameStem = (a: string, b: string) =>
  a.length >= 3 && b.length >= 3 && (a.startsWith(b) || b.startsWith(a));
const hasStem = (stems: string[], word: string) => stems.some((s) => sameStem(s, stem(word)));
const wordsOf = (name: string) =>
  name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length >= 3);
const short = (text: string, max = 220) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

interface Scope {
  args: Json;
  /** The records the call is about, the call's own first, latest of each tool. */
  records: Json[];
}

/** The call's arguments and the records it is about (see the comment at the top). */
function scopeOf(event: TaskCompleted, index: number, args: Json): Scope {
  const seen: { tool: string; record: Json; about: Set<string> }[] = [];
  for (let i = 0; i < index; i += 1) {
    const step = event.events[i];
    if (step?.type !== "tool_response") continue;
    const record = parsedStep(event, i);
    if (!isObject(record)) continue;
    const about = new Set<string>();
    for (const v of Object.values(record)) if (typeof v === "string") about.add(v);
    // The call that asked for it names what it is about (a profile fetched by its user id).
    for (let j = i - 1; j >= 0; j -= 1) {
      const call = event.events[j];
      if (call?.type !== "tool_call") continue;
      if (call.toolName === step.toolName) {
        const callArgs = parsedStep(event, j);
        if (isObject(callArgs))
          for (const v of Object.values(callArgs)) if (typeof v === "string") about.add(v);
      }
      break;
    }
    seen.push({ tool: step.toolName ?? "", record, about });
  }
  const latestAbout = (id: string) => {
    const byTool = new Map<string, Json>();
    for (const s of seen) if (s.about.has(id)) byTool.set(s.tool, s.record);
    return [...byTool.values()];
  };
  const ids = (o: Json) =>
    Object.entries(o)
      .filter(([k, v]) => typeof v === "string" && /(^|_)id$/i.test(k))
      .map(([, v]) => v as string);
  const direct = ids(args).flatMap(latestAbout);
  const linked = direct.flatMap((r) => ids(r).flatMap(latestAbout));
  return { args, records: [...new Set([...direct, ...linked])] };
}

/** The first value of a field whose name has one of the stems: the call's own, then its records'. */
function field(scope: Scope, stems: string[], test: (v: unknown) => boolean = () => true) {
  for (const o of [scope.args, ...scope.records])
    for (const [k, v] of Object.entries(o))
      if (wordsOf(k).some((w) => hasStem(stems, w)) && test(v)) return { name: k, value: v };
  return undefined;
}

/** The first scalar value (any field) that one of `phrases` names as whole words, with its field. */
function valueSaid(scope: Scope, phrases: string[]) {
  for (const o of [scope.args, ...scope.records])
    for (const [k, v] of Object.entries(o)) {
      if (typeof v !== "string" || v.length < 3 || /\d/.test(v) || negative(v)) continue;
      if (phrases.some((p) => says(p, norm(v)))) return { name: k, value: v };
    }
  return undefined;
}

const timeOf = (v: unknown) => {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)/.exec(String(v));
  return m ? Date.parse(`${m[1] ?? ""}T${m[2] ?? ""}Z`) : Number.NaN;
};

/**
 * The policy's sentences that speak of this call: those under a heading that names its action
 * ("## Cancel flight" for `cancel_reservation`, "## Refund" for a certificate sent as a refund), or
 * under no heading. A rule under another action's heading is that action's ("Checked bag
 * allowance" under "## Book flight" is not a rule for adding bags later).
 */
const maxSentenceChars = 1_000;

export function policySentences(policy: string, actionWords: readonly string[]): string[] {
  return sentencesOf(policy, actionWords.map(stem));
}

function sentencesOf(policy: string, actionStems: string[]): string[] {
  const out: string[] = [];
  let applies = true;
  for (const line of policy.split(/\n+/)) {
    const heading = /^\s*#{2,}\s*(.+)$/.exec(line)?.[1];
    if (heading !== undefined) {
      applies = wordsOf(heading).some((w) => hasStem(actionStems, w));
      continue;
    }
    if (!applies) continue;
    for (const sentence of line.split(/(?<=[.!?])\s+/)) {
      const s = sentence.replace(/^[-*#\s]+/, "").trim();
      // A rule is a sentence, not a page: the shapes above are read only in sentences this long,
      // which also bounds what their patterns scan.
      if (s.length >= 20 && s.length <= maxSentenceChars) out.push(s);
    }
  }
  return out;
}

/**
 * "Otherwise, <classes> can be <verb> only if <needs> is bought …": the classes it speaks of and
 * what they need. Read by position (a policy sentence is untrusted text).
 */
function onlyIf(otherwise: string): { classes: string; needs: string } | null {
  const lower = otherwise.toLowerCase();
  const at = lower.indexOf(" only if ");
  const canBe = lower.lastIndexOf(" can be ", at);
  if (at < 0 || canBe < 0) return null;
  const rest = lower.slice(at + 9);
  const verb = [" is ", " are "].map((v) => rest.indexOf(v)).filter((i) => i > 0);
  const end = verb.length ? Math.min(...verb) : -1;
  if (
    end < 0 ||
    !/^(bought|purchased|included|added|present)\b/.test(rest.slice(end).replace(/^ (is|are) /, ""))
  )
    return null;
  return { classes: lower.slice(0, canBe).replace(/^otherwise,? ?/, ""), needs: rest.slice(0, end) };
}

const joiners = new Set(["and", "or", "but", "the", "while", "whereas"]);
/** "…, and business flights can always be cancelled": the class that always may (`business`). */
function alwaysClass(otherwise: string): string {
  const at = otherwise.toLowerCase().indexOf(" can always be");
  if (at < 0) return "";
  const words = wordsOf(otherwise.slice(Math.max(0, at - 60), at));
  const [before, last] = words.slice(-2);
  return before !== undefined && !joiners.has(before) ? before : (last ?? "");
}

/** "can be cancelled within 24 hours of booking, or if …", and the "Otherwise, …" after it. */
function windowBreach(
  sentences: string[],
  i: number,
  scope: Scope,
  verb: string,
  now: number,
  seenText: string,
): PolicyBreach | null {
  const s = sentences[i] ?? "";
  const w = /\b(?:can|may) be ([a-z]+) within (\d+) (hour|day)s? of (?:the )?([a-z]+)/i.exec(s);
  if (!w || !sameStem(stem(w[1] ?? ""), stem(verb)) || Number.isNaN(now)) return null;
  const limitH = Number(w[2]) * (/day/i.test(w[3] ?? "") ? 24 : 1);
  const when = field(scope, ["creat", "book", "place", "made"], (v) => !Number.isNaN(timeOf(v)));
  if (!when) return null;
  const hours = (now - timeOf(when.value)) / 3_600_000;
  if (hours <= limitH) return null;
  // The alternative ("or if the airline cancelled the flight"): any of its words' past forms
  // said by the user or a tool means it may hold.
  const orIf = s.toLowerCase().indexOf(" or if ");
  const alternative = orIf >= 0 ? s.slice(orIf + 7) : "";
  const pasts = wordsOf(alternative).filter((w) => w.endsWith("ed"));
  if (pasts.some((p) => new RegExp(`\\b${p}\\b`, "i").test(seenText))) return null;
  const next = sentences[i + 1] ?? "";
  const otherwise = /^otherwise\b/i.test(next) ? next : "";
  const values = [
    `\`${when.name}\` = \`${String(when.value)}\` (${hours.toFixed(0)} hours before the policy's current time)`,
  ];
  if (otherwise) {
    const only = onlyIf(otherwise);
    if (!only) return null;
    const classes = only.classes;
    const always = alwaysClass(otherwise);
    const cls = valueSaid(scope, [classes, always].filter(Boolean));
    if (cls === undefined) return null;
    const exempt = always !== "" && norm(cls.value) === always.toLowerCase();
    if (exempt || !says(classes, norm(cls.value))) return null;
    const needed = field(scope, wordsOf(only.needs).map(stem));
    if (!needed || !negative(needed.value)) return null;
    values.push(`\`${cls.name}\` = \`${cls.value}\``, `\`${needed.name}\` = \`${String(needed.value)}\``);
    return {
      sentence: short(`${s} ${otherwise}`, 320),
      values,
      required: `past ${String(limitH)} hours, a ${norm(cls.value)} booking may be ${w[1] ?? verb} only with ${only.needs}`,
    };
  }
  return {
    sentence: short(s),
    values,
    required: `within ${String(limitH)} hours of ${w[4] ?? "the event"} only`,
  };
}

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
  const seenText = before
    .filter((e) => e.type === "tool_response" || (e.actor !== undefined && userActor.test(e.actor)))
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
  const sentences = sentencesOf(policy, verbStems);
  for (let i = 0; i < sentences.length; i += 1) {
    const found =
      windowBreach(sentences, i, scope, verb, now, seenText) ??
      allowanceBreach(sentences[i] ?? "", scope) ??
      prohibitionBreach(sentences[i] ?? "", scope, verbStems);
    if (found) return found;
  }
  return amountBreach(sentences, scope, objectStems);
}
