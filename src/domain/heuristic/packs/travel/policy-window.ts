import {
  field,
  hasStem,
  negative,
  norm,
  sameStem,
  short,
  stem,
  timeOf,
  valueSaid,
  wordsOf,
  type PolicyBreach,
  type Scope,
} from "./policy-scope.js";
import { says, sentencesOf } from "../../argument-sources.js";

/**
 * The time window of an action ("can be cancelled within 24 hours of booking, or if …") and the
 * "Otherwise, … only if <X> is bought and the condition is met" that follows it, with what <X>
 * covers read from the policy's own sentence about it ("… given health or weather reasons").
 */
/**
 * "Otherwise, <classes> can be <verb> only if <needs> is bought …": the classes it speaks of,
 * what they need, and whether a condition goes with it ("… and the condition is met"). Read by
 * position (a policy sentence is untrusted text).
 */
function onlyIf(otherwise: string): { classes: string; needs: string; condition: boolean } | null {
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
  const after = rest.slice(end).replace(/^ (is|are) [a-z]+/, "");
  return {
    classes: lower.slice(0, canBe).replace(/^otherwise,? ?/, ""),
    needs: rest.slice(0, end),
    condition:
      /^,? and (the |its |a )?(condition|reason|circumstance|cause)s? (is |are )?(met|covered|fulfilled|satisfied)\b/.test(
        after,
      ),
  };
}

/**
 * What the policy says <X> covers: the reasons of the sentence that names <X> and "… given
 * <a> or <b> reasons" ("enables full refund if the user needs to cancel the flight given health
 * or weather reasons"), read from anywhere in the policy; empty when no sentence says.
 */
function coveredReasons(
  allSentences: string[],
  needs: string,
): { sentence: string; reasons: string[] } | null {
  const needStems = wordsOf(needs).map(stem);
  for (const s of allSentences) {
    const words = wordsOf(s);
    if (!needStems.every((n) => words.some((w) => sameStem(stem(w), n)))) continue;
    const m =
      /\b(?:given|for|due to|because of)\s+((?:[a-z]+(?:,\s*|\s+or\s+|\s+and\s+)){0,5}[a-z]+)\s+reasons?\b/i.exec(
        s,
      );
    if (!m) continue;
    const reasons = (m[1] ?? "")
      .split(/,|\bor\b|\band\b/)
      .map((r) => r.trim().toLowerCase())
      .filter((r) => r.length >= 3);
    if (reasons.length) return { sentence: s, reasons };
  }
  return null;
}

/**
 * The reasons the policy lists for the action ("the reason for cancellation (change of plan,
 * airline cancelled flight, or other reasons)"), each as the words it is written with.
 */
function listedReasons(sentences: string[]): string[] {
  for (const s of sentences) {
    const m = /\breason for [a-z]+ \(([^()]{3,200})\)/i.exec(s);
    if (m)
      return (m[1] ?? "")
        .split(/,|\bor\b/)
        .map((r) => r.trim().toLowerCase())
        .filter(Boolean);
  }
  return [];
}

/**
 * Words that may mean a covered reason without naming it (a sick relative is a health reason):
 * any of them in the user's words means the reason is not clearly outside the cover. Used only to
 * withhold a claim, never to make one.
 */
const maybeCovered =
  /\b(sick\w*|ill|illness|hospital\w*|doctor|medical|injur\w*|surgery|pregnan\w*|emergenc\w*|died|death|passed away|funeral|storm\w*|snow\w*|hurricane|flood\w*|tornado|fog|rain\w*|ice|icy)\b/i;

/**
 * The user's stated reason, when it is one of the policy's listed reasons that is not "other"
 * and names none of the covered ones: the listed reason and the user's sentence that states it.
 * Null when the user's words could be a covered reason, or state no listed one.
 */
function uncoveredReason(
  userText: string,
  listed: string[],
  covered: string[],
): { reason: string; said: string } | null {
  const coveredStems = covered.flatMap(wordsOf).map(stem);
  const userWords = wordsOf(userText);
  if (maybeCovered.test(userText) || userWords.some((w) => hasStem(coveredStems, w))) return null;
  for (const reason of listed) {
    if (/^other\b/.test(reason) || wordsOf(reason).some((w) => hasStem(coveredStems, w))) continue;
    const stems = wordsOf(reason)
      .filter((w) => w.length >= 4)
      .map(stem);
    if (stems.length === 0) continue;
    for (const sentence of sentencesOf(userText)) {
      const words = wordsOf(sentence);
      if (stems.every((st) => words.some((w) => sameStem(stem(w), st))))
        return { reason, said: short(sentence.trim(), 160) };
    }
  }
  return null;
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
export function windowBreach(
  sentences: string[],
  i: number,
  scope: Scope,
  verb: string,
  now: number,
  seenText: string,
  allSentences: string[] = sentences,
  userText = "",
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
    if (!needed) return null;
    values.push(`\`${cls.name}\` = \`${cls.value}\``, `\`${needed.name}\` = \`${String(needed.value)}\``);
    if (!negative(needed.value)) {
      // <X> was bought: the condition it carries ("and the condition is met") is the reason it
      // covers, read from the sentence that says what <X> does; a breach only when the user's
      // stated reason is one the policy lists and clearly not a covered one.
      if (!only.condition) return null;
      const cover = coveredReasons(allSentences, only.needs);
      if (!cover) return null;
      const user = uncoveredReason(userText, listedReasons(sentences), cover.reasons);
      if (!user) return null;
      values.push(`the user's reason = ${user.reason} ('${user.said.replace(/["'`]/g, "")}')`);
      return {
        sentence: short(`${s} ${otherwise} ${cover.sentence}`, 480),
        values,
        required: `past ${String(limitH)} hours, a ${norm(cls.value)} booking with ${only.needs} may be ${w[1] ?? verb} only for a reason it covers (${cover.reasons.join(" or ")}), and ${user.reason} is not one`,
      };
    }
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
