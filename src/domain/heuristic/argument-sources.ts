/** A call's arguments, read as the trace wrote them, and where in a text a value is said. */
import type { TaskCompleted } from "../contracts/index.js";

export interface Leaf {
  path: string;
  value: string;
}

export const userActor = /^(user|human|customer|client)$/i;

/** A JSON object as a trace's tool arguments and replies hold it. */
export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
/** A JSON value as text: the string itself, else empty. */
export const textOf = (v: unknown) => (typeof v === "string" ? v : "");

/** A text's sentences and lines, as the user or the policy wrote them (untrimmed). */
export const sentencesOf = (text: string) => text.split(/(?<=[.!?])\s+|\n+/);

export function parseArguments(content: string): unknown {
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return null;
  }
}

/**
 * A step's content parsed as JSON, once per event: every write call of a trace reads the tool
 * outputs before it, and a trace may hold hundreds of them.
 */
const parsedByEvent = new WeakMap<TaskCompleted, Map<number, unknown>>();
export function parsedStep(event: TaskCompleted, index: number): unknown {
  let parsed = parsedByEvent.get(event);
  if (!parsed) {
    parsed = new Map();
    parsedByEvent.set(event, parsed);
  }
  if (!parsed.has(index)) parsed.set(index, parseArguments(event.events[index]?.content ?? ""));
  return parsed.get(index);
}

/** The scalar arguments of a call, by path (`payment_methods[].payment_id`). */
export function leavesOf(value: unknown, path = ""): Leaf[] {
  if (Array.isArray(value)) return value.flatMap((v) => leavesOf(v, `${path}[]`));
  if (value && typeof value === "object")
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
      leavesOf(v, path ? `${path}.${k}` : k),
    );
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return [{ path: path || "value", value: String(value) }];
  return [];
}

/** Whether a value is said in a text: as a word, case aside (a number or id, not a substring of one). */
export function says(text: string, value: string): boolean {
  if (value.length < 2) return false;
  const escaped = value.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, "u").test(text.toLowerCase());
}

/**
 * Every tool reply before `index`, parsed, with the call it answers parsed too (the nearest
 * earlier call; null when there is none): how a search's results are read with what was searched.
 */
export function* toolReplies(
  event: TaskCompleted,
  index: number,
): Generator<{ step: number; reply: unknown; query: unknown }> {
  for (let i = 0; i < index; i += 1) {
    if (event.events[i]?.type !== "tool_response") continue;
    let callAt = i - 1;
    while (callAt >= 0 && event.events[callAt]?.type !== "tool_call") callAt -= 1;
    yield { step: i, reply: parsedStep(event, i), query: callAt >= 0 ? parsedStep(event, callAt) : null };
  }
}
