import type { TaskCompleted } from "../../../contracts/index.js";
import { hasStem, sameStem, stem, wordsOf } from "../../policy-text.js";

export { hasStem, sameStem, stem, wordsOf };
import { isObject, parsedStep, says, type Json } from "../../argument-sources.js";

/** What a policy condition the call did not meet is reported as (policy-conditions.ts). */
export interface PolicyBreach {
  /** The policy sentence whose condition the call did not meet. */
  sentence: string;
  /** The values from the trace that decide it, as `name = value`. */
  values: string[];
  /** What the condition required, in a few words. */
  required: string;
}

/**
 * The words, values and records a policy condition is read against: the call's arguments and
 * the records it is about (see policy-conditions.ts), and how a policy word is compared.
 */
export const norm = (v: unknown) =>
  String(v).toLowerCase().replace(/[_-]+/g, " ").replace(/\s+/g, " ").trim();
export const negative = (v: unknown) => /^(no|false|none|0|)$/.test(norm(v));
const numberWords = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
export const toNumber = (word: string) =>
  /^\d+$/.test(word) ? Number(word) : numberWords.indexOf(word.toLowerCase());
/** A word's stem as compared here: its first five letters, plural and past endings aside. */
export const short = (text: string, max = 220) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export interface Scope {
  args: Json;
  /** The records the call is about, the call's own first, latest of each tool. */
  records: Json[];
}

/** The call's arguments and the records it is about (see the comment at the top). */
export function scopeOf(event: TaskCompleted, index: number, args: Json): Scope {
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
export function field(scope: Scope, stems: string[], test: (v: unknown) => boolean = () => true) {
  for (const o of [scope.args, ...scope.records])
    for (const [k, v] of Object.entries(o))
      if (wordsOf(k).some((w) => hasStem(stems, w)) && test(v)) return { name: k, value: v };
  return undefined;
}

/** The first scalar value (any field) that one of `phrases` names as whole words, with its field. */
export function valueSaid(scope: Scope, phrases: string[]) {
  for (const o of [scope.args, ...scope.records])
    for (const [k, v] of Object.entries(o)) {
      if (typeof v !== "string" || v.length < 3 || /\d/.test(v) || negative(v)) continue;
      if (phrases.some((p) => says(p, norm(v)))) return { name: k, value: v };
    }
  return undefined;
}

export const timeOf = (v: unknown) => {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)/.exec(String(v));
  return m ? Date.parse(`${m[1] ?? ""}T${m[2] ?? ""}Z`) : Number.NaN;
};
