import type { TaskCompleted } from "../../../src/domain/contracts/index.js";
import { detour, planText, step, TraceBuilder, type StepSpec } from "./builder.js";
import { codingFamilies } from "./coding.js";
import { dataFamilies } from "./data.js";
import { planningFamilies } from "./planning.js";
import { hex, int, rngFor, type Rng } from "./random.js";
import type { AnyFamily, Domain, Scenario } from "./scenario.js";
import { articlePage, prose } from "./text.js";
import { webFamilies } from "./web.js";

/**
 * A corpus of failed multi-agent runs (Magentic-One and AutoGen group-chat style) with the
 * ground truth of each failure: the step and the agent where it went wrong, and a cause id that
 * is shared only by true recurrences of the same mistake.
 */

export interface CorpusTrace {
  event: TaskCompleted;
  /** `family/mode`; equal for two traces only when the second repeats the first's mistake. */
  causeId: string;
  family: string;
  failingStepIndex: number;
  failingActor: string;
}

export interface CorpusOptions {
  tenantId?: string;
  errorMessage?: string;
}

export const corpusFamilies: readonly AnyFamily[] = [
  ...webFamilies,
  ...codingFamilies,
  ...dataFamilies,
  ...planningFamilies,
];

const projectByDomain: Record<Domain, string> = {
  web: "gaia-web",
  coding: "gaia-coding",
  data: "data-analysis",
  planning: "planning-assistant",
};

const corpusStart = Date.UTC(2025, 2, 3, 8, 0, 0);
const maxSteps = 130;

interface Slot {
  family: AnyFamily;
  mode: string;
  variant: number;
  wording: number;
}

/** First occurrences of every cause in a shuffled order, then one recurrence for every other family, placed after its original. */
function schedule(): Slot[] {
  const rng = rngFor("corpus-order");
  const firsts: Slot[] = [];
  corpusFamilies.forEach((family) => {
    family.modes.forEach((mode, m) => firsts.push({ family, mode, variant: m, wording: m % 2 }));
  });
  const order = firsts
    .map((slot) => ({ slot, key: rng() }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.slot);
  corpusFamilies.forEach((family, f) => {
    if (f % 2 !== 0) return;
    const mode = family.modes[(f / 2) % 3] ?? family.modes[0];
    const original = order.findIndex((s) => s.family === family && s.mode === mode);
    const at = Math.min(order.length, original + int(rng, 12, 45));
    order.splice(at, 0, { family, mode, variant: 3, wording: 1 });
  });
  return order;
}

function stepTarget(rng: Rng, big: boolean): number {
  const roll = rng();
  const target = roll < 0.12 ? int(rng, 6, 11) : roll < 0.7 ? int(rng, 14, 48) : int(rng, 50, maxSteps);
  return big ? Math.min(target, 70) : target;
}

function groupchatTask(s: Scenario): string {
  return [
    "You are given: (1) a task and advice from your manager with a specific plan and (2) a general task.",
    "Collect information from the general task, follow the suggestions from manager to solve the task.",
    "",
    "# General Task",
    s.question,
    "",
    "# Task and suggestions from manager",
    "## Task description",
    s.question,
    "",
    "## Plan for solving the task",
    ...s.sheet.plan.map((p, i) => `${i + 1}. ${p}`),
    "",
    "## Output format",
    "The answer only, in the format the task asks for.",
    "",
    "## Constraints and conditions for completion",
    ...s.sheet.given.map((g) => `- ${g}`),
  ].join("\n");
}

/** Lays a scenario out as steps: plan, opening, detours, core (with detours after the failing step), final answer. */
export function layOut(s: Scenario, rng: Rng, target: number): StepSpec[] {
  const head: StepSpec[] =
    s.style === "magentic"
      ? [step.say("Orchestrator", planText(s.question, s.team, s.sheet))]
      : [step.say("Assistant", groupchatTask(s))];
  const closing: StepSpec[] = s.finalInCore
    ? []
    : s.style === "magentic"
      ? [step.say("Orchestrator", `FINAL ANSWER: ${s.answer}`)]
      : [step.say("Assistant", `The final answer is: ${s.answer}\n\nTERMINATE`)];
  const fixed = head.length + s.opening.length + s.core.length + closing.length;
  const before: StepSpec[] = [];
  const after: StepSpec[] = [];
  let budget = Math.min(maxSteps, target) - fixed;
  const state = { cookies: false, replanned: false };
  while (budget > 0) {
    const extra = detour(rng, s.detourKind, s.detourCtx, state);
    if (extra.length > budget) break;
    (rng() < 0.7 ? before : after).push(...extra);
    budget -= extra.length;
  }
  const failAt = s.core.findIndex((x) => x.fail === true);
  if (failAt < 0) throw new Error(`scenario without a failing step: ${s.question}`);
  const core =
    failAt < s.core.length - 1
      ? [...s.core.slice(0, failAt + 1), ...after, ...s.core.slice(failAt + 1)]
      : [...s.core];
  if (failAt === s.core.length - 1) before.push(...after);
  return [...head, ...s.opening, ...before, ...core, ...closing];
}

function toEvent(
  specs: StepSpec[],
  s: Scenario,
  meta: { index: number; key: string; domain: Domain; start: number },
  options: CorpusOptions,
): { event: TaskCompleted; failingStepIndex: number; failingActor: string } {
  const rng = rngFor(`ids:${meta.key}`);
  const id = `${String(meta.index).padStart(3, "0")}-${hex(rng, 6)}`;
  const builder = new TraceBuilder(rng, `ma-${id}`, meta.start);
  specs.forEach((spec) => {
    builder.add(spec);
  });
  if (builder.failingIndex < 0) throw new Error(`${meta.key}: no failing step`);
  const event: TaskCompleted = {
    schemaVersion: 1,
    eventId: `evt-ma-${id}`,
    tenantId: options.tenantId ?? "tenant-gaia",
    projectId: projectByDomain[meta.domain],
    agentId: s.style === "magentic" ? "magentic-one" : "autogen-groupchat",
    sessionId: `sess-${hex(rng, 10)}`,
    taskId: `task-${hex(rng, 10)}`,
    loopId: `loop-ma-${id}`,
    occurredAt: new Date(builder.now + int(rng, 400, 3000)).toISOString(),
    task: { description: s.question, answer: s.answer },
    outcome: "failure",
    error: {
      category: "evaluation_error",
      message: options.errorMessage ?? "the final answer was judged incorrect",
    },
    events: builder.steps,
  };
  return { event, failingStepIndex: builder.failingIndex, failingActor: builder.failingActor };
}

export function multiAgentFailures(options: CorpusOptions = {}): CorpusTrace[] {
  const out: CorpusTrace[] = [];
  let clock = corpusStart;
  schedule().forEach((slot, index) => {
    const key = `${slot.family.id}/${slot.mode}/${slot.variant}`;
    const rng = rngFor(key);
    const big = slot.family.domain !== "planning" && rng() < 0.22;
    const scenario = slot.family.build(slot.mode, slot.variant, {
      rng,
      big,
      wording: slot.wording,
      mode: slot.mode,
    });
    const specs = layOut(scenario, rng, stepTarget(rng, big));
    const built = toEvent(specs, scenario, { index, key, domain: slot.family.domain, start: clock }, options);
    clock = Date.parse(built.event.occurredAt) + int(rng, 60_000, 1_800_000);
    out.push({
      event: built.event,
      causeId: `${slot.family.id}/${slot.mode}`,
      family: slot.family.id,
      failingStepIndex: built.failingStepIndex,
      failingActor: built.failingActor,
    });
  });
  return out;
}

/**
 * One 130-step, ~340 KB failing web trace whose page dump is 80,000 characters: larger than a
 * single step may be, on purpose, for exercising how oversized steps are handled.
 */
export function bigTrace(options: CorpusOptions = {}): CorpusTrace {
  const family = webFamilies[0];
  if (!family) throw new Error("no web family");
  const rng = rngFor("big-trace");
  const scenario = family.build("wrong-row", 4, { rng, big: true, wording: 1, mode: "wrong-row" });
  const specs = layOut(scenario, rng, maxSteps);
  while (specs.length < maxSteps)
    specs.splice(specs.length - 1, 0, step.browse("I scrolled down one page in the browser.", "page_down()"));
  const dump = specs.findIndex((x) => x.type === "tool_response" && x.content.length > 20_000);
  const page = specs[dump];
  if (!page) throw new Error("big trace without a page dump");
  const head = page.content.split("Viewport text:\n")[0] ?? "";
  const body = articlePage(rng, {
    title: "List of United States cities by population - Wikipedia",
    topic: "list of cities by population",
    body: page.content.slice(head.length),
    targetChars: 200_000,
  });
  const fullBody = `${head}Viewport text:\n${body}`;
  specs[dump] = { ...page, content: fullBody.slice(0, 80_000) };
  let size = specs.reduce((n, x) => n + x.content.length, 0);
  for (let i = 0; size < 330_000 && i < specs.length * 4; i += 1) {
    const candidate = specs[i % specs.length];
    if (!candidate || i % specs.length === dump || candidate.fail || candidate.type !== "tool_response")
      continue;
    const extra = `\n${prose(rng, 14, "list of cities by population")}`;
    specs[i % specs.length] = { ...candidate, content: candidate.content + extra };
    size += extra.length;
  }
  const built = toEvent(
    specs,
    scenario,
    { index: 999, key: "big-trace", domain: "web", start: Date.UTC(2025, 5, 2, 9, 0, 0) },
    options,
  );
  return {
    event: built.event,
    causeId: `${family.id}/wrong-row`,
    family: family.id,
    failingStepIndex: built.failingStepIndex,
    failingActor: built.failingActor,
  };
}
