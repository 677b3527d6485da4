import { isWriteTool } from "../attribution/state-change.js";
import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { leavesOf, parseArguments, sentencesOf, userActor, type Leaf } from "./argument-sources.js";
import type { BudgetMiss } from "./packs/travel/budget-cap.js";
import type { ChoiceMiss } from "./packs/travel/choice-criteria.js";
import type { ReturnMiss } from "./packs/travel/round-trip.js";
import type { DateMiss } from "./packs/travel/same-dates.js";
import {
  derivable,
  hasStem,
  kindOf,
  kindsNear,
  mentions,
  saysKind,
  stemOf,
  userCount,
  wordsOf,
} from "./call-values.js";
import { policySentences } from "./policy-text.js";

export { mentions, wordsOf };

/**
 * What a state-changing call did that the trace itself shows was not asked for, compared only
 * with what came before it in the same trace:
 * - `contradicts_user`: an argument whose value differs from one the user gave for it (the user
 *   asked to pay by gift card and the call pays by credit card; the user said three bags and the
 *   call carries two); both values are named;
 * - `unsourced`: an argument whose value no user message and no earlier tool output holds, so
 *   the agent made it up (a count of bags, a date), free text and sums of seen amounts aside;
 * - `unasked`: a write whose action the user never asked for (a certificate sent, a transfer);
 * - `breaks_policy`: a condition the policy states for the call, visibly not met by the values
 *   the trace holds (policy-conditions.ts); the values and what the condition required are named;
 * - `misses_choice`: the user stated what they wanted of the option (the cheapest, the second
 *   cheapest, nonstop, a time bound, the fastest, the earliest) and the agent's own search for the
 *   same route and date shows the option taken breaks it or is beaten by one that meets it all
 *   (choice-criteria.ts); both options are named with the values that decide;
 * - `no_return`: a round trip whose flights, by the agent's own searches, never come back to its
 *   origin (round-trip.ts);
 * - `over_budget`: the call charged more than the cap the user last stated (budget-cap.ts);
 * - `moves_date`: a change of flights that moves a leg off its date although the user asked for
 *   the same dates (same-dates.ts).
 * A call that the tool rejected changed nothing and is passed over.
 */
export type Mismatch =
  | { kind: "contradicts_user"; path: string; value: string; userSaid: string }
  | { kind: "unsourced"; leaves: Leaf[] }
  | { kind: "unasked"; asked: string }
  | { kind: "breaks_policy"; values: string[]; required: string }
  | ({ kind: "misses_choice" } & ChoiceMiss)
  | ({ kind: "no_return" } & ReturnMiss)
  | ({ kind: "over_budget" } & BudgetMiss)
  | ({ kind: "moves_date" } & DateMiss);

export interface CallFinding {
  index: number;
  step: TraceEvent;
  mismatch: Mismatch;
  /** The policy sentence (from the system prompt before the call) that speaks of what went wrong. */
  policy?: string;
}

const editVerbs = [
  "chang",
  "modif",
  "updat",
  "upgrad",
  "downgr",
  "add",
  "remov",
  "switch",
  "move",
  "edit",
  "apply",
];
/** Verbs a user uses to ask for what a tool of this verb does. */
const askedBy: Record<string, string[]> = {
  cancel: ["cancel"],
  book: ["book", "reserv"],
  reserve: ["book", "reserv"],
  update: editVerbs,
  modify: editVerbs,
  change: editVerbs,
  send: ["compens", "certif", "voucher", "send", "refund", "credit"],
  transfer: ["transfer", "human", "agent", "representative", "person", "supervisor", "manager"],
  refund: ["refund", "money back", "reimburs"],
  delete: ["delet", "remov", "cancel"],
  remove: ["delet", "remov", "cancel"],
};

const short = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * The policy sentence before the call that speaks of what went wrong: it names every stem of one
 * of the groups (all words of an argument's name, or the action) and states a rule; the one that
 * names them most often wins.
 */
function policyFor(policyText: string, groups: string[][], when = false): string | undefined {
  let best: { text: string; score: number } | undefined;
  for (const sentence of sentencesOf(policyText)) {
    const s = sentence.replace(/^[-*#\s]+/, "").trim();
    if (s.length < 20 || !/\b(must|only|cannot|not|never|should|at most|if|unless|each|per)\b/i.test(s))
      continue;
    const hit = groups.filter((g) => g.length > 0 && g.every((stem) => hasStem(s, stem)));
    if (hit.length === 0) continue;
    const uses = [...new Set(hit.flat())].reduce(
      (n, stem) => n + Math.min(3, s.match(new RegExp(`(^|[^a-z])${stem}`, "gi"))?.length ?? 0),
      0,
    );
    // For an action taken unasked, the rule that says when it may be taken.
    const score =
      hit.length * 2 +
      uses +
      (when && /\b(unless|only if|if and only if|proactive|explicitly)/i.test(s) ? 4 : 0);
    if (!best || score > best.score) best = { text: s, score };
  }
  return best ? short(best.text, 220) : undefined;
}
const nameStems = (path: string) =>
  wordsOf(
    path
      .split(/[.[\]]+/)
      .filter(Boolean)
      .pop() ?? path,
  )
    .filter((w) => w.length >= 3 && w !== "total")
    .map(stemOf);

function rejected(events: readonly TraceEvent[], index: number): boolean {
  const reply = events.slice(index + 1, index + 3).find((e) => e.type === "tool_response");
  return reply !== undefined && (/^\s*error\b/i.test(reply.content) || reply.error !== undefined);
}

/** A value of another kind than the one the user asked for, when the records offered the asked one. */
function kindContradiction(
  leaves: Leaf[],
  userText: string,
  toolText: string,
  policyText: string,
): Omit<CallFinding, "index" | "step"> | null {
  for (const leaf of leaves) {
    const kind = kindOf(leaf.value);
    // The user quoting the value itself (their own id) chose it.
    if (!kind || saysKind(userText, kind) || mentions(userText, leaf.value)) continue;
    // Several values for one argument (a split payment): one the user asked for is enough.
    const siblings = leaves.filter((l) => l.path === leaf.path).map((l) => kindOf(l.value));
    if (siblings.some((k) => k !== null && saysKind(userText, k))) continue;
    const others = [...kindsNear(toolText, leaf.value)].filter((k) => k !== kind && saysKind(userText, k));
    if (others.length === 1 && others[0])
      return {
        mismatch: { kind: "contradicts_user", path: leaf.path, value: leaf.value, userSaid: others[0] },
        policy: policyFor(policyText, [wordsOf(kind).map(stemOf), wordsOf(others[0]).map(stemOf)]),
      };
  }
  return null;
}

/** What a check reads about one state-changing call: the call and what came before it. */
export interface CallContext {
  event: TaskCompleted;
  index: number;
  /** The request words that ask for the call's action (`cancel` for `cancel_reservation`). */
  asks: readonly string[];
  leaves: Leaf[];
  userText: string;
  toolText: string;
  agentText: string;
  policyText: string;
  toolStems: string[];
  /** Whether an action the user never asked for counts: at the first write only (see `firstMismatch`). */
  unaskedCounts: boolean;
}

export type CallCheckResult = Omit<CallFinding, "index" | "step">;

/**
 * One check of a state-changing call: the kind of mismatch it finds, and how. Checks run in list
 * order and the first that finds something decides; a domain pack's checks run before these.
 */
export interface CallCheck {
  kind: Mismatch["kind"];
  find: (call: CallContext) => CallCheckResult | null;
}

/** A count that differs from the one the user gave (three bags asked, two booked). */
function countContradiction(c: CallContext): CallCheckResult | null {
  const counted = new Map<string, Leaf[]>();
  for (const leaf of c.leaves.filter((l) => /^\d+$/.test(l.value))) {
    const said = saidCount(c.userText, leaf);
    if (said === undefined) continue;
    const key = String(said);
    counted.set(key, [...(counted.get(key) ?? []), leaf]);
  }
  for (const [said, group] of counted) {
    if (group.some((l) => l.value === said)) continue;
    const leaf = group.find((l) => /total/i.test(l.path)) ?? group[0];
    if (leaf)
      return {
        mismatch: { kind: "contradicts_user", path: leaf.path, value: leaf.value, userSaid: said },
        policy: policyFor(c.policyText, [nameStems(leaf.path)]),
      };
  }
  return null;
}

const saidCount = (userText: string, leaf: Leaf) => {
  const name =
    leaf.path
      .split(/[.[\]]+/)
      .filter(Boolean)
      .pop() ?? leaf.path;
  const stems = wordsOf(name)
    .filter((w) => w.length >= 3)
    .map(stemOf);
  return userCount(userText, stems.length > 1 ? stems.slice(-1) : stems);
};

/** A write the user never asked for. */
function unaskedCall(c: CallContext): CallCheckResult | null {
  if (!c.unaskedCounts || c.asks.length === 0) return null;
  if (c.asks.some((a) => new RegExp(`(^|[^a-z])${a}`, "i").test(c.userText))) return null;
  return {
    mismatch: { kind: "unasked", asked: short(c.userText.split("\n")[0] ?? "", 110) },
    policy: policyFor(c.policyText, [c.toolStems, ...c.asks.slice(0, 2).map((a) => [a])], true),
  };
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Values from nowhere: neither the user nor an earlier tool gave them. */
function unsourcedValues(c: CallContext): CallCheckResult | null {
  const { userText, toolText, agentText } = c;
  const sums = derivable(`${toolText}\n${userText}`);
  const unsourced = c.leaves.filter((l) => {
    if (l.value.length > 40 || l.value.split(/\s+/).length > 3) return false; // free text
    if (/^(true|false|yes|no|none|null|0)$/i.test(l.value)) return false; // defaults
    if (mentions(userText, l.value) || mentions(toolText, l.value) || mentions(agentText, l.value))
      return false;
    if (/^\d+$/.test(l.value) && saidCount(userText, l) === Number(l.value)) return false;
    // A count of something the user asked about without a number ("use my free bag allowance")
    // was worked out, maybe rightly: only a count of what the user never spoke of is made up.
    if (/^\d+$/.test(l.value) && nameStems(l.path).some((stem) => hasStem(userText, stem))) return false;
    // The key and the value are the trace's text: matched literally (a `(` in a value is no group).
    const [key, value] = [l.path.split(/[.[\]]+/).pop() ?? "", l.value].map(literal);
    if (new RegExp(`"${key}"\\s*:\\s*"?${value}\\b`).test(toolText)) return false;
    return !(/^\d+(\.\d+)?$/.test(l.value) && sums.has(String(Number(l.value))) && Number(l.value) >= 10);
  });
  if (unsourced.length === 0) return null;
  return {
    mismatch: { kind: "unsourced", leaves: unsourced },
    policy: policyFor(
      c.policyText,
      unsourced.map((l) => nameStems(l.path)),
    ),
  };
}

/**
 * The general checks, in order: a value of another kind than the user asked for (pay by gift
 * card, not credit card), a count other than the user gave, a write the user never asked for,
 * values from nowhere.
 */
export const generalCallChecks: readonly CallCheck[] = [
  {
    kind: "contradicts_user",
    find: (c) => kindContradiction(c.leaves, c.userText, c.toolText, c.policyText) ?? countContradiction(c),
  },
  { kind: "unasked", find: unaskedCall },
  { kind: "unsourced", find: unsourcedValues },
];

/** What the call at `index` did that the trace before it shows was not asked for, if anything. */
export function mismatchOf(
  event: TaskCompleted,
  index: number,
  /** Whether an action the user never asked for counts: at the first write only (see `firstMismatch`). */
  unaskedCounts = true,
  checks: readonly CallCheck[] = generalCallChecks,
): CallCheckResult | null {
  const step = event.events[index];
  if (!step?.toolName) return null;
  const before = event.events.slice(0, index);
  const userText = before
    .filter((e) => e.actor && userActor.test(e.actor))
    .map((e) => e.content)
    .join("\n");
  const toolText = before
    .filter((e) => e.type === "tool_response")
    .map((e) => e.content)
    .join("\n");
  // What the agent told the user or searched for before the call: values it presented are not made up.
  const agentText = before
    .filter((e) => e.type === "tool_call" || (e.type === "llm_response" && !userActor.test(e.actor ?? "")))
    .map((e) => e.content)
    .join("\n");
  const wholePolicy = before
    .filter((e) => e.type === "system_event" || e.actor === "system")
    .map((e) => e.content)
    .join("\n");
  const verb = wordsOf(step.toolName)[0] ?? "";
  const asks = askedBy[verb] ?? [];
  const call: CallContext = {
    event,
    index,
    asks,
    leaves: leavesOf(parseArguments(step.content)),
    userText,
    toolText,
    agentText,
    // The sentences a lesson may quote: those under the call's own heading or under none.
    policyText: policySentences(wholePolicy, [verb, ...asks]).join("\n"),
    toolStems: wordsOf(step.toolName)
      .filter((w) => w.length >= 4)
      .slice(0, 2)
      .map(stemOf),
    unaskedCounts,
  };
  for (const check of checks) {
    const found = check.find(call);
    if (found) return found;
  }
  return null;
}

/**
 * The first state-changing call from `from` on that the tool accepted and whose mismatch the trace
 * shows, or null when none of them shows one. An unasked action counts only before any write was
 * accepted: after one, a transfer or a gesture is often the agent's answer to what that write did.
 */
export function firstMismatch(
  event: TaskCompleted,
  from: number,
  checks: readonly CallCheck[] = generalCallChecks,
): CallFinding | null {
  let accepted = false;
  for (let i = from; i < event.events.length; i += 1) {
    const step = event.events[i];
    if (step?.type !== "tool_call" || !isWriteTool(step.toolName) || rejected(event.events, i)) continue;
    const found = mismatchOf(event, i, !accepted, checks);
    accepted = true;
    if (found) return { index: i, step, ...found };
  }
  return null;
}
