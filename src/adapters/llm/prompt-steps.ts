import { isErrorStep } from "../../domain/attribution/explicit-errors.js";
import { cutMarker, cutMiddle } from "../../domain/contracts/cut-text.js";
import type { TraceEvent } from "../../domain/contracts/index.js";
import { estimateTokens } from "./token-estimate.js";

/**
 * Which trace steps a prompt shows, within a token budget (`fitSteps`). The whole run when it
 * fits: the decisive step is often far from where the failure shows, and a rule-based guess of it
 * is often wrong, so the model must be able to read every step. Beyond the budget, every step
 * still keeps its index, actor, type, tool and first line, and the long bodies (web pages, tool
 * outputs) are cut in the middle, the longest first, down to a common length; only when even the
 * shortest form of every step does not fit are steps dropped (`selectSteps`): taken in order of
 * use to a reader looking for the cause — the step the failure is attributed to, its neighbours,
 * the first step (the task as the agents saw it) and the last (the answer), every step that
 * reported an error, then the others nearest the failing step first — and what is left out is
 * summarised per gap ("steps 12–97 omitted: …"), so the model knows what it does not see.
 */

export interface PromptStep {
  index: number;
  eventId: string;
  type: TraceEvent["type"];
  actor?: string;
  toolName?: string;
  content: string;
  error?: unknown;
  metadata?: unknown;
}

export interface OmittedSteps {
  omittedSteps: string;
  summary: string;
}

export type PromptStepEntry = PromptStep | OmittedSteps;

/** Characters of a step's content kept in the prompt, by the step's place. */
export const stepContentChars = { failing: 6_000, neighbour: 2_000, other: 800, minimal: 240 };
const metadataChars = 600;

function clipJson(value: unknown, max: number): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text.length <= max ? value : cutMiddle(text, max);
}

/** Characters of a step's first line that a cut step keeps whatever else is cut. */
export const firstLineChars = 160;

/**
 * `text` cut in the middle to `maxChars`, like `cutMiddle`, but the head keeps the first line (up
 * to `firstLineChars`): what a step was (the command, the page's title, who spoke to whom) is on
 * its first line.
 */
export function cutKeepingFirstLine(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const newline = text.indexOf("\n");
  const firstLine = Math.min(newline < 0 ? text.length : newline, firstLineChars);
  const room = Math.max(0, maxChars - cutMarker(text.length).length);
  if (firstLine <= Math.ceil(room / 2)) return cutMiddle(text, maxChars);
  let headEnd = Math.min(firstLine, room);
  if (headEnd > 0 && isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd -= 1;
  let tailStart = text.length - (room - headEnd);
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;
  return `${text.slice(0, headEnd)}${cutMarker(tailStart - headEnd)}${text.slice(tailStart)}`;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

function render(step: TraceEvent, index: number, contentChars: number): PromptStep {
  return {
    index,
    eventId: step.eventId,
    type: step.type,
    ...(step.actor !== undefined ? { actor: step.actor } : {}),
    ...(step.toolName !== undefined ? { toolName: step.toolName } : {}),
    content: cutKeepingFirstLine(step.content, contentChars),
    ...(step.error !== undefined ? { error: clipJson(step.error, metadataChars) } : {}),
    ...(step.metadata !== undefined ? { metadata: clipJson(step.metadata, metadataChars) } : {}),
  };
}

/** Tokens an entry costs inside the pretty-printed data block (two levels of indentation deep). */
export function entryTokens(entry: PromptStepEntry): number {
  const text = JSON.stringify(entry, null, 2);
  let lines = 1;
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === 10) lines += 1;
  // Escaped `<`, `>` and `&` grow by five characters each; counted as if every one were there.
  return estimateTokens(text) + Math.ceil((lines * 4) / 3) + 2;
}

const kinds: Record<TraceEvent["type"], string> = {
  tool_call: "tool calls",
  tool_response: "tool responses",
  llm_call: "LLM calls",
  llm_response: "LLM responses",
  error_event: "error events",
  system_event: "system events",
};

function top(counts: Map<string, number>, limit: number): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([name, n]) => `${name.slice(0, 40)} ${String(n)}`)
    .join(", ");
}

/** "steps 12–97 omitted (86): tool calls 40, …; 3 errors; by WebSurfer 45, …; tools …". */
export function summariseGap(events: readonly TraceEvent[], from: number, to: number): OmittedSteps {
  const byKind = new Map<string, number>();
  const byActor = new Map<string, number>();
  const byTool = new Map<string, number>();
  let errors = 0;
  for (let i = from; i <= to; i += 1) {
    const step = events[i];
    if (!step) continue;
    byKind.set(kinds[step.type], (byKind.get(kinds[step.type]) ?? 0) + 1);
    if (step.actor !== undefined) byActor.set(step.actor, (byActor.get(step.actor) ?? 0) + 1);
    if (step.toolName !== undefined) byTool.set(step.toolName, (byTool.get(step.toolName) ?? 0) + 1);
    if (isErrorStep(step)) errors += 1;
  }
  const count = to - from + 1;
  const range = from === to ? String(from) : `${String(from)}–${String(to)}`;
  const parts = [
    `step${count === 1 ? "" : "s"} ${range} omitted (${String(count)}): ${top(byKind, 6)}`,
    `${String(errors)} error${errors === 1 ? "" : "s"}`,
    byActor.size > 0 ? `by ${top(byActor, 5)}` : "",
    byTool.size > 0 ? `tools ${top(byTool, 5)}` : "",
  ];
  return { omittedSteps: range, summary: parts.filter(Boolean).join("; ") };
}

/** Steps in the order they earn a place: the failure and its context first. */
function priorityOrder(events: readonly TraceEvent[], focus: number | undefined): number[] {
  const last = events.length - 1;
  const centre = focus ?? last;
  const first = [
    focus,
    focus !== undefined ? focus - 1 : undefined,
    focus !== undefined ? focus + 1 : undefined,
  ];
  const order: number[] = [];
  const taken = new Set<number>();
  const take = (i: number | undefined) => {
    if (i === undefined || i < 0 || i > last || taken.has(i)) return;
    taken.add(i);
    order.push(i);
  };
  for (const i of first) take(i);
  take(0);
  take(last);
  events.forEach((step, i) => {
    if (isErrorStep(step)) take(i);
  });
  const rest = events.map((_, i) => i).filter((i) => !taken.has(i));
  rest.sort((a, b) => Math.abs(a - centre) - Math.abs(b - centre) || a - b);
  for (const i of rest) take(i);
  return order;
}

export interface StepSelection {
  entries: PromptStepEntry[];
  shown: number;
  omitted: number;
}

/**
 * The steps that fit in `budgetTokens` (their summaries included), in trace order, with the
 * gaps summarised. `focus` is the index of the step the failure is attributed to.
 */
export function selectSteps(
  events: readonly TraceEvent[],
  focus: number | undefined,
  budgetTokens: number,
): StepSelection {
  const last = events.length - 1;
  const essential = new Set<number>(
    [
      focus,
      focus !== undefined ? focus - 1 : undefined,
      focus !== undefined ? focus + 1 : undefined,
      0,
      last,
    ].filter((i): i is number => i !== undefined && i >= 0 && i <= last),
  );
  // Every gap's summary costs tokens too; reserve an average one per shown step.
  const summaryTokens = 70;
  const cost = (entry: PromptStep) => entryTokens(entry) + summaryTokens;
  // Room for every essential step at its shortest is kept until that step has its place, so the
  // failing step cannot crowd out the first and the last.
  const minimalCost = new Map<number, number>();
  for (const i of essential) {
    const step = events[i];
    if (step) minimalCost.set(i, cost(render(step, i, stepContentChars.minimal)));
  }
  let reserved = [...minimalCost.values()].reduce((a, b) => a + b, 0);
  let remaining = budgetTokens;
  const chosen = new Map<number, PromptStep>();
  for (const i of priorityOrder(events, focus)) {
    const step = events[i];
    if (!step) continue;
    const isEssential = minimalCost.has(i);
    if (isEssential) reserved -= minimalCost.get(i) ?? 0;
    const room = remaining - reserved;
    if (room < summaryTokens) {
      if (isEssential) continue;
      break;
    }
    const distance = focus === undefined ? Infinity : Math.abs(i - focus);
    let chars =
      distance === 0
        ? stepContentChars.failing
        : distance === 1
          ? stepContentChars.neighbour
          : stepContentChars.other;
    let entry = render(step, i, chars);
    // An essential step is cut shorter until it fits; any other is left out.
    while (isEssential && cost(entry) > room && chars > stepContentChars.minimal) {
      chars = Math.max(stepContentChars.minimal, Math.floor(chars / 2));
      entry = render(step, i, chars);
    }
    const entryCost = cost(entry);
    if (entryCost > room) continue;
    chosen.set(i, entry);
    remaining -= entryCost;
  }

  const entries: PromptStepEntry[] = [];
  let gapStart = -1;
  for (let i = 0; i <= last; i += 1) {
    const entry = chosen.get(i);
    if (entry === undefined) {
      if (gapStart < 0) gapStart = i;
      continue;
    }
    if (gapStart >= 0) entries.push(summariseGap(events, gapStart, i - 1));
    gapStart = -1;
    entries.push(entry);
  }
  if (gapStart >= 0) entries.push(summariseGap(events, gapStart, last));
  return { entries, shown: chosen.size, omitted: events.length - chosen.size };
}

/** The shortest a step is cut to before any step is dropped: its first line and a little of its end. */
export const minStepChars = 240;

/**
 * Every step, in trace order, each cut to at most `cap` characters of content (twice that for
 * the step the failure is attributed to), with what that costs.
 */
function everyStep(
  events: readonly TraceEvent[],
  focus: number | undefined,
  cap: number,
): { entries: PromptStep[]; tokens: number } {
  let tokens = 0;
  const entries = events.map((step, i) => {
    const entry = render(step, i, i === focus ? cap * 2 : cap);
    tokens += entryTokens(entry);
    return entry;
  });
  return { entries, tokens };
}

/** Characters of a step's content read to learn its tokens per character (escapes, non-ASCII). */
const densitySampleChars = 2_000;

/**
 * What every step costs at a content cap, estimated without rendering it: a trace may hold 2,000
 * steps of 64,000 characters, and rendering all of them at every try of the bisection would cost
 * seconds. Each step's frame (index, ids, actor, metadata, a cut marker) is rendered once; its
 * content counts at the tokens per character of its first 2,000 characters.
 */
function costModel(events: readonly TraceEvent[], focus: number | undefined): (cap: number) => number {
  const frames: number[] = [];
  const densities: number[] = [];
  events.forEach((step, i) => {
    frames.push(
      entryTokens(render({ ...step, content: "" }, i, 0)) +
        Math.ceil(cutMarker(step.content.length).length / 2),
    );
    const sample = step.content.slice(0, densitySampleChars);
    densities.push(sample.length > 0 ? estimateTokens(JSON.stringify(sample)) / sample.length : 0);
  });
  return (cap) =>
    events.reduce((sum, step, i) => {
      const chars = Math.min(step.content.length, i === focus ? cap * 2 : cap);
      return sum + (frames[i] ?? 0) + Math.ceil(chars * (densities[i] ?? 0));
    }, 0);
}

/**
 * The steps a prompt shows within `budgetTokens`: the whole trace when it fits; else every step,
 * its long bodies cut in the middle to the longest common length that fits (found by bisection on
 * an estimate, then measured, so short steps stay whole and the longest are cut most); only when
 * every step at its shortest does not fit, the steps `selectSteps` chooses.
 */
export function fitSteps(
  events: readonly TraceEvent[],
  focus: number | undefined,
  budgetTokens: number,
): StepSelection {
  const longest = events.reduce((max, step) => Math.max(max, step.content.length), 0);
  const estimate = costModel(events, focus);
  let high = longest;
  if (estimate(longest) > budgetTokens) {
    let low = minStepChars;
    if (estimate(low) > budgetTokens) return selectSteps(events, focus, budgetTokens);
    while (high - low > Math.max(16, low >> 5)) {
      const cap = Math.floor((low + high) / 2);
      if (estimate(cap) <= budgetTokens) low = cap;
      else high = cap;
    }
    high = low;
  }
  // The estimate may be off by a little: measure, and cut further while it does not fit.
  for (let tries = 0; tries < 6; tries += 1) {
    const shown = everyStep(events, focus, high);
    if (shown.tokens <= budgetTokens) return { entries: shown.entries, shown: events.length, omitted: 0 };
    if (high <= minStepChars) break;
    high = Math.max(minStepChars, Math.floor(high * Math.min(0.95, budgetTokens / shown.tokens)));
  }
  return selectSteps(events, focus, budgetTokens);
}
