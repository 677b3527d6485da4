import { isWriteTool } from "../../../attribution/state-change.js";
import type { TaskCompleted } from "../../../contracts/index.js";
import { isObject, parsedStep, says, toolReplies, userActor, type Json } from "../../argument-sources.js";
import { userCriteria, type Bound, type Criteria } from "./user-criteria.js";

/**
 * A choice that the user's own criteria and the agent's own search results show was not the one
 * asked for. The criteria are read from the user's words before the call (since the last write the
 * tool accepted), never from a list of tasks:
 * - price: "the cheapest", "the second cheapest" (an ordinal before it), "lowest price";
 * - stops: "nonstop", "direct flight";
 * - time bounds on departure or arrival: "arrive before 7am", "not before 11am", "departing after
 *   8am and before 9pm" (the verb before the bound says which; without one, no bound is read);
 * - "fastest" / "shortest" / "quickest": the least total travel time;
 * - "earliest" / "latest" flight: the first or last departure (arrival when the words say so).
 * A later sentence with "instead" or "actually" that states a criterion starts the list anew; a
 * later word for a connection ("one-stop is fine") drops "nonstop".
 *
 * The candidates are the options the agent's own searches returned for the route and date of the
 * option the call took (an option is a flight or a list of connecting flights; its price in a
 * class is the sum of its flights'). A breach is claimed only when every value it needs is seen:
 * the option taken breaks a stated bound or "nonstop" while another option meets all of them, or
 * meets them but another option that also does is cheaper (for "the Nth cheapest": N options of
 * distinct lower prices), faster, or earlier/later. Nothing is claimed when the user named the
 * option taken (its flight number, "option 2") after stating the criteria, when two orderings are
 * asked at once and no option beats the taken one on both, when the class the user named is not
 * the call's, or when a value is missing.
 */
export interface ChoiceOption {
  flights: string[];
  step: number;
  price?: number;
  departs?: string;
  arrives?: string;
  minutes?: number;
}

export interface ChoiceMiss {
  /** The user's words that stated the criteria. */
  asked: string;
  /** The criteria, as this module names them ("the cheapest", "nonstop", "arriving before 07:00"). */
  criteria: string[];
  cls: string;
  /** What the option taken did wrong, in a few words ("has a stop", "is not the cheapest"). */
  breach: string;
  /** The criterion it breached, as in `criteria`. */
  criterion: string;
  chosen: ChoiceOption;
  /** The options that show it: the one that meets the criteria, or the N cheaper ones. */
  better: ChoiceOption[];
}

const norm = (v: string) => v.toLowerCase().replace(/[_-]+/g, " ").trim();

interface Option {
  flights: Json[];
  step: number;
  /** The date the search asked for (a flight's own `date` wins). */
  date: string;
}

/** The options of a search result: each item, a flight or a list of connecting flights. */
function optionsOf(result: unknown, step: number, date: string): Option[] {
  if (!Array.isArray(result)) return [];
  return result.flatMap((item): Option[] => {
    if (isObject(item)) return [{ flights: [item], step, date }];
    if (Array.isArray(item) && item.length > 0 && item.every(isObject))
      return [{ flights: item, step, date }];
    return [];
  });
}

const numberOf = (f: Json) => (typeof f.flight_number === "string" ? f.flight_number : "");
const dateOf = (f: Json, o: Option) => (typeof f.date === "string" ? f.date : o.date);

/** The value of the first field whose name has all the words (`scheduled_departure_time_est`). */
function fieldWith(f: Json, words: string[]): unknown {
  const key = Object.keys(f).find((k) => words.every((w) => norm(k).includes(w)));
  return key === undefined ? undefined : f[key];
}

/** "06:00:00" → 360, "01:30:00+1" → 1530; undefined when not a clock time. */
function clock(v: unknown): number | undefined {
  if (typeof v !== "string") return undefined;
  const m = /^(\d{1,2}):(\d{2})(?::\d{2})?(?:\s*\+(\d))?$/.exec(v.trim());
  return m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3] ?? 0) * 1440 : undefined;
}
const dayOf = (date: string) => {
  const t = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(t) ? undefined : Math.round(t / 86_400_000);
};

interface Values {
  option: Option;
  /** Seats free and the flight bookable in the class (unknown fields are taken as free). */
  bookable: boolean;
  price?: number;
  /** Departure and arrival in minutes from the searched date's midnight. */
  departs?: number;
  arrives?: number;
}

function valuesOf(option: Option, cls: string): Values {
  let price: number | undefined = 0;
  let bookable = true;
  for (const f of option.flights) {
    const prices = f.prices;
    const key = isObject(prices) ? Object.keys(prices).find((k) => norm(k) === cls) : undefined;
    const p = key !== undefined && isObject(prices) ? prices[key] : undefined;
    price = typeof p === "number" && price !== undefined ? price + p : undefined;
    const seats = f.available_seats;
    const free = key !== undefined && isObject(seats) ? seats[key] : undefined;
    if (typeof free === "number" && free <= 0) bookable = false;
    if (typeof f.status === "string" && f.status !== "available") bookable = false;
  }
  const first = option.flights[0];
  const last = option.flights.at(-1);
  const base = dayOf(option.date);
  const at = (f: Json | undefined, side: "departure" | "arrival") => {
    if (!f || base === undefined) return undefined;
    const t = clock(fieldWith(f, [side, "time"]));
    const day = dayOf(dateOf(f, option));
    return t === undefined || day === undefined ? undefined : (day - base) * 1440 + t;
  };
  const departs = at(first, "departure");
  let arrives = at(last, "arrival");
  // A connection's arrival the day after its last flight's date is written as "+1" already.
  if (departs !== undefined && arrives !== undefined && arrives < departs) arrives = undefined;
  return {
    option,
    bookable,
    ...(price !== undefined ? { price } : {}),
    ...(departs !== undefined ? { departs } : {}),
    ...(arrives !== undefined ? { arrives } : {}),
  };
}

const hhmm = (minutes: number) =>
  `${String(Math.floor((minutes % 1440) / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}${minutes >= 1440 ? " (+1 day)" : ""}`;
const boundName = (b: Bound) => `${b.on === "arrival" ? "arriving" : "departing"} ${b.op} ${hhmm(b.minutes)}`;

/** Whether an option meets a bound: true, false, or undefined (a value is missing or it is on the line). */
function meets(v: Values, b: Bound): boolean | undefined {
  const t = b.on === "arrival" ? v.arrives : v.departs;
  // Only within the searched day: "before 7am" says nothing of a next-day arrival.
  if (t === undefined || t >= 1440 || t === b.minutes) return undefined;
  return b.op === "before" ? t < b.minutes : t > b.minutes;
}

const isDirect = (v: Values) => v.option.flights.length === 1;

export function choiceMiss(event: TaskCompleted, index: number): ChoiceMiss | null {
  const step = event.events[index];
  const args = step ? parsedStep(event, index) : null;
  if (!isObject(args) || !Array.isArray(args.flights)) return null;
  const cls = typeof args.cabin === "string" ? norm(args.cabin) : undefined;
  if (!cls) return null;
  // The request this call answers: the user's words since the last write the tool accepted.
  let from = 0;
  for (let i = index - 1; i >= 0; i -= 1) {
    const e = event.events[i];
    if (e?.type !== "tool_call" || !isWriteTool(e.toolName)) continue;
    const reply = event.events.slice(i + 1, i + 3).find((r) => r.type === "tool_response");
    if (reply && !/^\s*error\b/i.test(reply.content) && reply.error === undefined) {
      from = i + 1;
      break;
    }
  }
  const { criteria: c, lastAt } = userCriteria(event, from, index);
  if (lastAt < 0) return null;
  // The class: the one the user named, when they named any.
  if (c.classes.size > 0 && !c.classes.has(cls)) return null;
  if (c.rank !== undefined && c.rank > 1 && !c.classes.has(cls)) return null;

  const chosen = new Set(
    args.flights.filter(isObject).map((f) => `${numberOf(f)}@${typeof f.date === "string" ? f.date : ""}`),
  );
  const chosenNumbers = [...chosen].map((k) => k.split("@")[0] ?? "").filter(Boolean);
  // Where the user named an option after stating what they wanted (its flight number, "option 2").
  let pickedAt = -1;
  for (let i = lastAt + 1; i < index && pickedAt < 0; i += 1) {
    const e = event.events[i];
    if (!e?.actor || !userActor.test(e.actor)) continue;
    if (
      chosenNumbers.some((n) => says(e.content, n)) ||
      /\boption\s*#?\d\b|\b(first|second|third|last|1st|2nd|3rd)\s+(option|one|flight)\b/i.test(e.content)
    )
      pickedAt = i;
  }
  const found = missAmong(event, index, c, cls, chosen);
  if (!found || pickedAt < 0) return found;
  // The user picked it knowing the better option (the agent had shown its flights): their choice,
  // not a breach. A pick among options the agent showed without the better one is the agent's.
  const agentSaid = event.events
    .slice(0, pickedAt)
    .filter((e) => e.type === "llm_response" && !(e.actor && userActor.test(e.actor)))
    .map((e) => e.content)
    .join("\n");
  return found.better.every((o) => o.flights.every((n) => says(agentSaid, n))) ? null : found;
}

function missAmong(
  event: TaskCompleted,
  index: number,
  c: Criteria,
  cls: string,
  chosen: Set<string>,
): ChoiceMiss | null {
  // The searches the agent ran, grouped by what they searched (origin, destination, date).
  const groups = new Map<string, Option[]>();
  for (const { step: i, reply, query } of toolReplies(event, index)) {
    if (!isObject(query) || typeof query.date !== "string") continue;
    const options = optionsOf(reply, i, query.date);
    if (options.length === 0) continue;
    const key = ["origin", "destination", "date"].map((k) => JSON.stringify(query[k] ?? null)).join("|");
    groups.set(key, [...(groups.get(key) ?? []), ...options]);
  }
  const named = [
    ...(c.rank === 1
      ? ["the cheapest"]
      : c.rank
        ? [`the ${c.rank === 2 ? "second" : "third"} cheapest`]
        : []),
    ...(c.direct ? ["nonstop"] : []),
    ...c.bounds.map(boundName),
    ...(c.fastest ? ["the shortest travel time"] : []),
    ...(c.extreme ? [`the ${c.extreme.which} ${c.extreme.on}`] : []),
  ];
  const asked = c.sentences.slice(-3).join(" ");
  const show = (v: Values): ChoiceOption => ({
    flights: v.option.flights.map(numberOf),
    step: v.option.step,
    ...(v.price !== undefined ? { price: v.price } : {}),
    ...(v.departs !== undefined ? { departs: hhmm(v.departs) } : {}),
    ...(v.arrives !== undefined ? { arrives: hhmm(v.arrives) } : {}),
    ...(v.departs !== undefined && v.arrives !== undefined ? { minutes: v.arrives - v.departs } : {}),
  });
  const miss = (breach: string, criterion: string, taken: Values, better: Values[]): ChoiceMiss => ({
    asked,
    criteria: named,
    cls,
    breach,
    criterion,
    chosen: show(taken),
    better: better.map(show),
  });

  for (const options of groups.values()) {
    // The option taken: the one of this search whose flights (on their dates) the call took, the longest.
    const taken = options
      .filter(
        (o) => o.flights.length > 0 && o.flights.every((f) => chosen.has(`${numberOf(f)}@${dateOf(f, o)}`)),
      )
      .sort((a, b) => b.flights.length - a.flights.length)[0];
    if (!taken) continue;
    const t = valuesOf(taken, cls);
    const takenKey = taken.flights.map(numberOf).join("+");
    const seen = new Set<string>([takenKey]);
    const others: Values[] = [];
    for (const o of options) {
      const key = o.flights.map(numberOf).join("+");
      if (seen.has(key)) continue;
      seen.add(key);
      const v = valuesOf(o, cls);
      if (v.bookable) others.push(v);
    }
    // Options that meet every stated condition, each value seen.
    const fits = (v: Values) => (!c.direct || isDirect(v)) && c.bounds.every((b) => meets(v, b) === true);
    const fitting = others.filter(fits);
    // 1. The option taken breaks a stated condition while another option meets them all.
    const broken = c.direct && !isDirect(t) ? "nonstop" : c.bounds.find((b) => meets(t, b) === false);
    if (broken !== undefined) {
      const alternative = fitting.sort((a, b) => (a.price ?? Infinity) - (b.price ?? Infinity))[0];
      if (!alternative) continue;
      const criterion = typeof broken === "string" ? broken : boundName(broken);
      const breach =
        typeof broken === "string"
          ? `has ${String(t.option.flights.length - 1)} stop${t.option.flights.length > 2 ? "s" : ""}`
          : `${broken.on === "arrival" ? "arrives" : "departs"} at ${hhmm((broken.on === "arrival" ? t.arrives : t.departs) ?? 0)}`;
      return miss(breach, criterion, t, [alternative]);
    }
    if (!fits(t) && (c.direct || c.bounds.length > 0)) continue; // a value of the taken option is missing
    // 2. It meets them, but another option that does is better by the ordering asked for.
    const orderings = [c.rank !== undefined, c.fastest, c.extreme !== undefined].filter(Boolean).length;
    if (orderings === 0) continue;
    const duration = (v: Values) =>
      v.departs !== undefined && v.arrives !== undefined ? v.arrives - v.departs : undefined;
    const when = (v: Values) => (c.extreme?.on === "arrival" ? v.arrives : v.departs);
    const better = (v: Values) => {
      const checks: (boolean | undefined)[] = [];
      if (c.rank !== undefined)
        checks.push(v.price === undefined || t.price === undefined ? undefined : v.price < t.price);
      if (c.fastest) {
        const a = duration(v);
        const b = duration(t);
        checks.push(a === undefined || b === undefined ? undefined : a < b);
      }
      if (c.extreme) {
        const a = when(v);
        const b = when(t);
        checks.push(
          a === undefined || b === undefined ? undefined : c.extreme.which === "earliest" ? a < b : a > b,
        );
      }
      return checks.every((x) => x === true);
    };
    if (c.rank !== undefined && orderings === 1) {
      if (t.price === undefined) continue;
      // The Nth cheapest: N options of distinct prices below the one taken show it is not.
      const below = new Map<number, Values>();
      for (const v of fitting)
        if (v.price !== undefined && v.price < t.price && !below.has(v.price)) below.set(v.price, v);
      const cheaper = [...below.values()].sort((a, b) => (a.price ?? 0) - (b.price ?? 0));
      if (cheaper.length < c.rank) continue;
      return miss(
        c.rank === 1 ? "is not the cheapest" : `has ${String(cheaper.length)} cheaper options`,
        named[0] ?? "the cheapest",
        t,
        cheaper.slice(0, c.rank === 1 ? 1 : Math.max(c.rank, 2)),
      );
    }
    if (c.rank !== undefined && c.rank > 1) continue; // "the second cheapest" with another ordering
    const winners = fitting.filter(better);
    if (winners.length === 0) continue;
    const best = winners.sort((a, b) =>
      c.fastest
        ? (duration(a) ?? 0) - (duration(b) ?? 0)
        : c.extreme
          ? ((when(a) ?? 0) - (when(b) ?? 0)) * (c.extreme.which === "earliest" ? 1 : -1)
          : (a.price ?? 0) - (b.price ?? 0),
    )[0];
    if (!best) continue;
    const criterion = named.filter((n) => !/^(nonstop|arriving|departing)/.test(n)).join(" and ");
    return miss(`is not ${criterion}`, criterion, t, [best]);
  }
  return null;
}
