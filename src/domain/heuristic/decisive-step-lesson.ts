import type { LocatedFailure } from "../attribution/located-failure.js";
import type { TaskCompleted } from "../contracts/index.js";
import { leavesOf, parseArguments, type Leaf } from "./argument-sources.js";
import { firstMismatch, generalCallChecks, type CallCheck, type CallFinding } from "./call-mismatch.js";
import type { ChoiceMiss, ChoiceOption } from "./packs/travel/choice-criteria.js";
import type { ReturnMiss } from "./packs/travel/round-trip.js";
import { identifier, identifierOf, phrase } from "./instruction-slots.js";

export { leavesOf, parseArguments, says, userActor, type Leaf } from "./argument-sources.js";

/**
 * A lesson about the decisive call of a failure that no error explains, written only when the
 * trace shows what was wrong with it: an argument that contradicts what the user said (both values
 * named), one that no user message or earlier tool output holds, a write the user never asked
 * for, or a condition the policy states for the call that the records show was not met, with the
 * policy sentence that speaks of it. The call is the first state-changing one the
 * tool accepted that shows such a mismatch, from the attribution's step on. When no call shows
 * one, what was found is said and no lesson is written: a read-back of arguments the user already
 * confirmed would not have prevented the failure.
 */
export interface DecisiveStepLesson {
  found: string;
  adjustments: string[];
  learning: string;
  tags: string[];
  patterns: string[];
}

export interface DecisiveStepReading {
  /** What the trace shows about the state-changing calls, lesson or not. */
  found: string;
  lesson: DecisiveStepLesson | null;
}

const short = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const show = (ls: Leaf[]) =>
  ls
    .slice(0, 4)
    .map((l) => `\`${l.path}\` = \`${short(l.value.replace(/[`"]/g, ""), 40)}\``)
    .join(", ");
const nameOf = (path: string) =>
  path
    .split(/[.[\]]+/)
    .filter(Boolean)
    .pop() ?? path;
const plain = (text: string) => text.replace(/["`]/g, "'");
const hours = (minutes: number) =>
  `${String(Math.floor(minutes / 60))} h${minutes % 60 ? ` ${String(minutes % 60).padStart(2, "0")}` : ""}`;
/** An option with the values the user's criteria turn on: its price, times, travel time. */
function describeOption(o: ChoiceOption, m: ChoiceMiss): string {
  const byPrice = m.criteria.some((c) => c.endsWith("cheapest"));
  const byTime = m.criteria.some((c) => /^(arriving|departing|the (earliest|latest))/.test(c));
  const byLength = m.criteria.includes("the shortest travel time");
  const parts: string[] = [];
  if (byTime || byLength) {
    if (o.departs !== undefined && o.arrives !== undefined) parts.push(`${o.departs}–${o.arrives}`);
    if (byLength && o.minutes !== undefined) parts.push(hours(o.minutes));
  }
  if (m.criteria.includes("nonstop"))
    parts.push(o.flights.length === 1 ? "nonstop" : `${String(o.flights.length - 1)} stop`);
  const name = o.flights.join(" + ");
  const price = byPrice && o.price !== undefined ? ` at ${String(o.price)}` : "";
  return `${name}${price}${parts.length ? ` (${parts.join(", ")})` : ""}`;
}

/**
 * An option as an instruction may name it: flights, times and dates as identifiers, price and
 * travel time as numbers (what is not an identifier is left out or named neutrally).
 */
const slotted = (o: ChoiceOption): ChoiceOption => ({
  flights: o.flights.map((f) => identifier(f, "a flight")),
  step: o.step,
  ...(o.price !== undefined ? { price: o.price } : {}),
  ...(identifierOf(o.departs) ? { departs: identifierOf(o.departs) } : {}),
  ...(identifierOf(o.arrives) ? { arrives: identifierOf(o.arrives) } : {}),
  ...(o.minutes !== undefined ? { minutes: o.minutes } : {}),
});

/** A miss's criteria as an instruction may say them: the generator's phrases with identifiers and numbers. */
const slottedMiss = (m: ChoiceMiss): ChoiceMiss => ({
  ...m,
  criteria: m.criteria.map((c) => phrase(c, "the user's criterion")),
  cls: phrase(m.cls, "the same class"),
  breach: phrase(m.breach, "misses the user's criteria"),
});

/** The records' values as identifiers (`created_at = 2024-05-12T09:36:29`), what is not one left out. */
const valueSlotsOf = (values: readonly string[]) =>
  values
    .map((v) => /^`([^`]+)` = `?([^`\s]+)/.exec(v))
    .map((p) => [identifierOf(p?.[1]), identifierOf(p?.[2])])
    .map(([field, value]) => (field && value ? `${field} = ${value}` : undefined))
    .filter((v): v is string => Boolean(v))
    .slice(0, 4);

/** A round trip's legs as identifiers: flight, date, from and to. */
const legSlotsOf = (m: ReturnMiss) =>
  m.legs
    .map(
      (l) =>
        `${identifier(l.flight, "a flight")} on ${identifier(l.date, "its date")} ${identifier(l.from, "its origin")}→${identifier(l.to, "its destination")}`,
    )
    .join(", ");

/**
 * The lesson of one mismatch. What the trace shows (`found`) quotes the trace: the values, the
 * user's words, the policy's sentence. The instructions (learning, adjustments, tags, patterns) are
 * the generator's own words, filled only with identifiers (the tool's, the argument's, a flight's,
 * a date) and numbers, each through a slot of `instruction-slots.ts`.
 */
function lessonOf(finding: CallFinding, where: string): DecisiveStepLesson {
  const tool = identifier(finding.step.toolName, "the call");
  const m = finding.mismatch;
  const policy = finding.policy ? `"${plain(finding.policy)}"` : undefined;
  const rule = policy ? `; the policy says ${policy}` : "";
  const step = where.split(",")[0] ?? "the call";
  switch (m.kind) {
    case "contradicts_user": {
      const name = identifier(nameOf(m.path), "the argument");
      const count = /^\d+$/.test(m.userSaid) && /^\d+$/.test(m.value);
      return {
        found: count
          ? `${where} set \`${m.path}\` = \`${m.value}\` where the user had said ${m.userSaid}${rule}`
          : `${where} used \`${m.path}\` = \`${m.value}\`, a ${m.value.replace(/_\d+$/, "").replace(/_/g, " ")}, where the user had asked for the ${m.userSaid}${rule}`,
        learning: count
          ? `Before \`${tool}\`, set \`${name}\` to the number the user gave: the user said ${m.userSaid} and the call at ${step} carried ${m.value}.`
          : `Before \`${tool}\`, use the ${phrase(m.userSaid, "value")} the user asked for as \`${name}\`: the agent sent \`${identifier(m.value, "another value")}\` instead.`,
        adjustments: [
          `add constraint: before calling ${tool}, compare ${name} with the value the user stated for it and use the user's value`,
          `change the source of ${name} for ${tool} from the records' first match to the user's stated choice`,
        ],
        tags: [tool, "decisive-step", "contradicts-user", name],
        patterns: [`${tool} with ${name} other than the user asked`],
      };
    }
    case "breaks_policy": {
      const values = m.values.join(", ");
      const fields = m.values
        .map((v) => identifierOf(/`([^`]+)`/.exec(v)?.[1]))
        .filter((f): f is string => Boolean(f));
      // The records' values as identifiers (`created_at = 2024-05-12T09:36:29`), what is not one left out.
      const valueSlots = valueSlotsOf(m.values);
      return {
        found: `${where} went ahead instead of applying the policy's condition: the policy says ${policy ?? "(no sentence)"}; the records show ${values}, so it required ${m.required}`,
        learning: `Before \`${tool}\`, check the policy's condition for it on the records${valueSlots.length ? `: here ${valueSlots.join(", ")}, which did not meet it` : ", which did not meet it"}, and the agent called \`${tool}\` anyway.`,
        adjustments: [
          `add constraint: before calling ${tool}, evaluate the policy's condition on ${fields.slice(0, 4).join(", ") || "the record's values"} and refuse or correct the call when it is not met`,
          `change ${tool} handling from acting on the user's request to acting only after the policy's condition holds on the records`,
        ],
        tags: [tool, "decisive-step", "policy-condition", ...fields.slice(0, 2)],
        patterns: [`${tool} against the policy on ${fields.slice(0, 3).join(", ") || "its records"}`],
      };
    }
    case "misses_choice": {
      const pure = m.criteria.length === 1 && m.criteria[0] === "the cheapest";
      const took = describeOption(m.chosen, m);
      const offered = m.better.map((o) => describeOption(o, m)).join(", ");
      const at = `step ${String(m.better[0]?.step ?? m.chosen.step)}`;
      // The same, as instructions may say it.
      const s = slottedMiss(m);
      const tookSlot = describeOption(slotted(m.chosen), m);
      const offeredSlot = m.better.map((o) => describeOption(slotted(o), m)).join(", ");
      return {
        found: `${where} chose ${took} in ${m.cls}, which ${m.breach}, instead of ${offered}, which the search at ${at} listed for the same route and date, although the user asked "${plain(m.asked)}"`,
        learning: pure
          ? `Before \`${tool}\`, when the user asks for the cheapest ${s.cls} option, take the lowest ${s.cls} price among all search results for that route and date: the agent took ${tookSlot} while ${at} offered ${offeredSlot}.`
          : `Before \`${tool}\`, keep only the searched ${s.cls} options that meet what the user asked (${s.criteria.join(", ")}) and take the one their words pick: the agent took ${tookSlot}, which ${s.breach}, while ${at} offered ${offeredSlot}.`,
        adjustments: [
          `add constraint: before calling ${tool}, filter every searched ${s.cls} option (direct and connecting) by the user's stated criteria (${s.criteria.join(", ")}) and order the rest by them`,
          `change the choice for ${tool} from the first suitable option to the one the user's criteria select among all search results`,
        ],
        tags: [tool, "decisive-step", "contradicts-user", pure ? "cheapest" : "user-criteria"],
        patterns: [
          pure
            ? `${tool} not the cheapest ${s.cls} option searched`
            : `${tool} not the ${s.cls} option the user's criteria select (${phrase(m.criterion, "the user's criterion")})`,
        ],
      };
    }
    case "no_return": {
      const legs = m.legs.map((l) => `${l.flight} on ${l.date} ${l.from}→${l.to}`).join(", ");
      const legSlots = legSlotsOf(m);
      const [origin, destination] = [
        identifier(m.origin, "the origin"),
        identifier(m.destination, "the destination"),
      ];
      return {
        found: `${where} booked a round trip from ${m.origin} to ${m.destination} with a return leg from a search in the outbound direction instead of one from ${m.destination} back to ${m.origin}: by the agent's searches (step ${String(m.legs.at(-1)?.step ?? 0)}) its flights are ${legs}, and none lands at ${m.origin}`,
        learning: `Before \`${tool}\` for a round trip, search the return leg from ${destination} back to ${origin} and book a flight that lands at ${origin}: the agent booked ${legSlots}.`,
        adjustments: [
          `add constraint: for a round trip, the return flights of ${tool} must come from a search whose origin is the trip's destination and whose destination is its origin`,
          `change the return search for ${tool} from the outbound direction to the swapped one`,
        ],
        tags: [tool, "decisive-step", "contradicts-user", "round-trip"],
        patterns: [`${tool} round trip that never returns to its origin`],
      };
    }
    case "over_budget": {
      const seen = m.from === "call" ? "the call's payments add up to" : "its reply shows a new payment of";
      return {
        found: `${where} went ahead without comparing what it would charge with the cap the user had set ("${plain(m.asked)}"): ${seen} ${String(m.charged)}, above $${String(m.cap)}`,
        learning: `Before \`${tool}\`, work out what the call will charge for every passenger and compare it with the user's cap: the user's cap was $${String(m.cap)} and the call charged ${String(m.charged)}.`,
        adjustments: [
          `add constraint: before calling ${tool}, compute its total charge and refuse or propose another option when it exceeds the cap the user stated ($${String(m.cap)})`,
          `change ${tool} handling from quoting a partial difference to quoting the full amount the call will charge`,
        ],
        tags: [tool, "decisive-step", "contradicts-user", "budget"],
        patterns: [`${tool} charging more than the user's cap`],
      };
    }
    case "moves_date": {
      const was = `the reservation's ${m.leg} leaves ${m.was.from} on ${m.was.date} (step ${String(m.was.step)})`;
      const now = `the call takes ${m.now.flight} on ${m.now.date} (searched at step ${String(m.now.step)})`;
      const wasDate = identifier(m.was.date, "its date");
      const wasSlot = `the reservation's ${m.leg} leg leaves ${identifier(m.was.from, "its origin")} on ${wasDate} (step ${String(m.was.step)})`;
      const nowSlot = `the call takes ${identifier(m.now.flight, "a flight")} on ${identifier(m.now.date, "another date")} (searched at step ${String(m.now.step)})`;
      return {
        found: `${where} moved the ${m.leg} leg to another date instead of keeping it, although the user asked "${plain(m.asked)}": ${was}, and ${now}`,
        learning: `Before \`${tool}\`, when the user asks for the same dates, search each leg on the date it leaves in the reservation: ${wasSlot}, and ${nowSlot}.`,
        adjustments: [
          `add constraint: before calling ${tool} for a request that keeps the dates, every new leg must leave on the date the reservation's leg leaves (${wasDate} for the ${m.leg})`,
          `change the ${m.leg} search for ${tool} from the leg's arrival date to its departure date`,
        ],
        tags: [tool, "decisive-step", "contradicts-user", "same-dates"],
        patterns: [`${tool} moving a leg off the date the user kept`],
      };
    }
    case "unasked":
      return {
        found: `${where} is an action the user never asked for (they asked: "${plain(m.asked)}")${rule}`,
        learning: `Call \`${tool}\` only when the user asks for it${policy ? " and the policy allows it" : ""}: here the user never asked, and the agent called it on its own.`,
        adjustments: [
          `add constraint: call ${tool} only after the user has asked for that action in this session`,
          `remove ${tool} from the actions the agent takes on its own initiative`,
        ],
        tags: [tool, "decisive-step", "unasked-action"],
        patterns: [`${tool} the user did not ask for`],
      };
    case "unsourced": {
      const names = [...new Set(m.leaves.map((l) => identifier(nameOf(l.path), "an argument")))];
      const setSlots = m.leaves
        .slice(0, 4)
        .map((l) => `${identifier(nameOf(l.path), "an argument")} = ${identifier(l.value, "a value")}`)
        .join(", ");
      const keys = names.map((n) => `\`${n}\``).join(", ");
      return {
        found: `${where} set ${show(m.leaves)}, which no user message and no earlier tool output holds, so the agent chose ${m.leaves.length > 1 ? "them" : "it"} without a source${rule}`,
        learning:
          `Before \`${tool}\`, work out ${keys} from what the user said and the records${policy ? ", by the policy's rule on it" : ""}, or ask: ` +
          `the agent set ${setSlots} with no source in the trace.`,
        adjustments: [
          `add constraint: every ${tool} argument (${names.join(", ")}) comes from the user's words or a tool result of this session`,
          `change the source of ${names.join(", ")} for ${tool} from the agent's guess to ${policy ? "the policy's rule applied to the user's records" : "a question to the user"}`,
        ],
        tags: [tool, "decisive-step", "unsourced-argument", ...names.slice(0, 2)],
        patterns: [`${tool} with ${names.join(", ")} from no source`],
      };
    }
  }
}

export function decisiveStepLesson(
  located: LocatedFailure,
  event: TaskCompleted,
  checks: readonly CallCheck[] = generalCallChecks,
): DecisiveStepReading | null {
  if (located.basis !== "first_state_change" || located.stepIndex === undefined) return null;
  const first = event.events[located.stepIndex];
  if (!first?.toolName) return null;
  const callAt = (index: number) => {
    const step = event.events[index];
    return `step ${String(index)} (${step?.eventId ?? "?"}), \`${step?.toolName ?? "?"}\``;
  };
  const firstCall = `the first call that changed state was ${callAt(located.stepIndex)}${
    leavesOf(parseArguments(first.content)).length
      ? ` with ${show(leavesOf(parseArguments(first.content)))}`
      : ""
  }`;
  const finding = firstMismatch(event, located.stepIndex, checks);
  if (!finding)
    return {
      found:
        `${firstCall}; in it and in every later accepted write, each argument matches what the user said or an earlier tool returned, ` +
        "and the user asked for each action, so the trace does not show which of them was wrong",
      lesson: null,
    };
  const lesson = lessonOf(finding, callAt(finding.index));
  const later =
    finding.index === located.stepIndex
      ? ""
      : `${firstCall}, where the trace shows no mismatch with what the user asked; the first accepted write that shows one is `;
  return { found: later ? `${later}${lesson.found}` : lesson.found, lesson };
}
