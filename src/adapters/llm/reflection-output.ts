import { z } from "zod";
import { Reflection, type TaskCompleted } from "../../domain/contracts/index.js";
import { jsonObjectText } from "./answer-json.js";
import { readModelAttribution } from "./model-attribution.js";
import type { PromptSecrets } from "./prompts.js";

/**
 * The checks on what the `openai` generator's model answers (the prompts are in prompts.ts): the
 * strict contract, the injection checks, and the bounds on what is kept of a reflection.
 */

/** The contract, strict: what the generator returns has exactly these keys, each of its type. */
export const StrictReflection = z.strictObject(Reflection.shape);
/** Everything but `attribution`, which is read leniently (model-attribution.ts). */
const StrictReflectionBody = StrictReflection.omit({ attribution: true });
const knownKeys: ReadonlySet<string> = new Set(Object.keys(Reflection.shape));

export type ParsedOutput =
  | { ok: true; reflection: Reflection; droppedKeys: number }
  | {
      ok: false;
      problems: string[];
      /** The answer as the repair request may show it: without the keys the contract does not name. */
      answer: string;
    };

function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/**
 * Parses and checks one model answer: JSON, no leaked secrets, the strict contract for every key
 * the contract names. Top-level keys it does not name are dropped, not repaired: real models
 * add `reasoning`, `notes`, `confidence_explanation` all the time, and a second call for that
 * would double the cost of a failure. Nothing of a dropped key goes anywhere: not into the
 * reflection, not into storage, not into a repair request (which shows the answer without them).
 * A dropped key is still read by the injection checks: the canary or the system instructions
 * anywhere in the answer mean the model obeyed something it should not have, and that answer
 * is repaired. A known key of the wrong type or out of range is repaired too. The attribution
 * alone is lenient: an invalid one is trimmed to what is valid or dropped, never a reason to
 * reject the answer. With `event`, step indexes are checked against its trace, and a success
 * carries no attribution.
 */
export function parseReflectionOutput(
  raw: string,
  secrets: PromptSecrets,
  system: string,
  event?: TaskCompleted,
): ParsedOutput {
  const problems: string[] = [];
  if (raw.includes(secrets.canary)) problems.push("the answer contains the secret marker");
  const flat = normalise(raw);
  const leaked = system
    .split("\n")
    .map(normalise)
    .some((line) => line.length >= 40 && flat.includes(line));
  if (leaked) problems.push("the answer repeats the system instructions");

  // The object itself: real models wrap it in a fence, a sentence before, a remark after.
  const text = jsonObjectText(raw);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    problems.push(`the answer is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    return { ok: false, problems, answer: raw };
  }
  let droppedKeys = 0;
  let rawAttribution: unknown;
  if (typeof json === "object" && json !== null && !Array.isArray(json)) {
    const known: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
      if (!knownKeys.has(key)) droppedKeys += 1;
      else if (key === "attribution") rawAttribution = value;
      else known[key] = value;
    }
    json = known;
  }
  const parsed = StrictReflectionBody.safeParse(json);
  if (!parsed.success) {
    for (const issue of parsed.error.issues.slice(0, 20)) {
      problems.push(`${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`);
    }
  }
  if (problems.length > 0 || !parsed.success) {
    const answer =
      typeof json === "object" && json !== null && !Array.isArray(json)
        ? JSON.stringify(rawAttribution === undefined ? json : { ...json, attribution: rawAttribution })
        : text;
    return { ok: false, problems, answer };
  }
  const attribution = event?.outcome === "success" ? undefined : readModelAttribution(rawAttribution, event);
  return {
    ok: true,
    reflection: { ...boundedReflection(parsed.data), ...(attribution ? { attribution } : {}) },
    droppedKeys,
  };
}

/** How much of a model's reflection is kept: enough for any good lesson, bounded for storage. */
export const reflectionLimits = {
  textChars: 4_000,
  listItems: 20,
  itemChars: 300,
  tagChars: 60,
} as const;

/**
 * A model's text made safe to store and serve: control characters other than line breaks and
 * tabs removed (NUL bytes among them, which Postgres refuses), a lone surrogate replaced by U+FFFD,
 * and cut to `max`.
 */
export function cleanModelText(text: string, max: number): string {
  let out = "";
  for (const char of text.toWellFormed()) {
    const code = char.codePointAt(0) ?? 0;
    if ((code < 0x20 && code !== 0x0a && code !== 0x09) || code === 0x7f) continue;
    out += char;
    if (out.length >= max) break;
  }
  return out.slice(0, max);
}

function boundedReflection<T extends Omit<Reflection, "attribution">>(r: T): T {
  const { textChars, listItems, itemChars, tagChars } = reflectionLimits;
  const list = (items: string[], max: number) =>
    items
      .slice(0, listItems)
      .map((item) => cleanModelText(item, max))
      .filter((item) => item.length > 0);
  return {
    ...r,
    reflectionText: cleanModelText(r.reflectionText, textChars),
    strategyText: r.strategyText === null ? null : cleanModelText(r.strategyText, textChars),
    learning: cleanModelText(r.learning, textChars),
    errorCategory: r.errorCategory === null ? null : cleanModelText(r.errorCategory, tagChars),
    tags: list(r.tags, tagChars),
    patterns: list(r.patterns, itemChars),
    adjustments: list(r.adjustments, itemChars),
  };
}
