import type { TaskCompleted } from "../contracts/index.js";
import { parsedStep, userActor } from "./argument-sources.js";

/**
 * A choice that the user's own criterion and the agent's own search results show was not the one
 * asked for: the user asked for the cheapest option of a class ("the cheapest economy option"),
 * and a search the agent ran, for the same origin, destination and date as the option the call
 * took, listed an option of that class with seats that cost less. An option is one item of a
 * search's result: a flight, or a list of connecting flights; its price in a class is the sum of
 * its flights' prices in that class. Nothing is claimed when the user asked for anything but the
 * cheapest ("the second cheapest"), named no class, or when the option the call took is not in a
 * search result the agent saw.
 */
export interface CheapestMiss {
  /** The user's words that asked for the cheapest. */
  asked: string;
  cls: string;
  chosen: { flights: string[]; price: number; step: number };
  cheaper: { flights: string[]; price: number; step: number };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const norm = (v: string) => v.toLowerCase().replace(/[_-]+/g, " ").trim();

interface Option {
  flights: Json[];
  step: number;
}

/** The options of a search result: each item, a flight or a list of connecting flights. */
function optionsOf(result: unknown, step: number): Option[] {
  if (!Array.isArray(result)) return [];
  return result.flatMap((item): Option[] => {
    if (isObject(item)) return [{ flights: [item], step }];
    if (Array.isArray(item) && item.length > 0 && item.every(isObject)) return [{ flights: item, step }];
    return [];
  });
}

/** The option's price in a class when every flight lists it with a seat free; else undefined. */
function priceIn(option: Option, cls: string): number | undefined {
  let total = 0;
  for (const f of option.flights) {
    const prices = f.prices;
    const seats = f.available_seats;
    if (!isObject(prices)) return undefined;
    const key = Object.keys(prices).find((k) => norm(k) === cls);
    const price = key === undefined ? undefined : prices[key];
    const free = key !== undefined && isObject(seats) ? seats[key] : undefined;
    if (typeof price !== "number" || (typeof free === "number" && free <= 0)) return undefined;
    if (typeof f.status === "string" && f.status !== "available") return undefined;
    total += price;
  }
  return total;
}

const numberOf = (f: Json) => (typeof f.flight_number === "string" ? f.flight_number : "");

export function cheapestMiss(event: TaskCompleted, index: number): CheapestMiss | null {
  const step = event.events[index];
  const args = step ? parsedStep(event, index) : null;
  if (!isObject(args) || !Array.isArray(args.flights)) return null;
  const before = event.events.slice(0, index);
  const userText = before
    .filter((e) => e.actor !== undefined && userActor.test(e.actor))
    .map((e) => e.content)
    .join("\n");
  // The user's last request for the cheapest, with the class it names: the sentence around the
  // word's last use (found by position, so a long message without full stops costs one pass).
  const at = userText.toLowerCase().lastIndexOf("cheapest");
  if (at < 0) return null;
  const start = Math.max(...[".", "?", "!", "\n"].map((c) => userText.lastIndexOf(c, at)), at - 300) + 1;
  const ends = [".", "?", "!", "\n"].map((c) => userText.indexOf(c, at)).filter((i) => i >= 0);
  const asked = userText.slice(start, Math.min(at + 300, ...ends)).trim();
  if (!asked || /\b(second|third|next)[\s-]+cheapest\b/i.test(asked)) return null;
  const cls = typeof args.cabin === "string" ? norm(args.cabin) : undefined;
  if (!cls) return null;
  // The class must be the one the user named ("economy" is not "basic economy", and the reverse).
  const named = norm(asked).replace(/\bnot (a |an )?basic economy\b/g, "");
  const saysCls = new RegExp(`(^|[^a-z])${cls}\\b`).test(named);
  if (!saysCls || (cls === "economy" && /\bbasic economy\b/.test(named))) return null;

  const chosenNumbers = new Set(
    args.flights.filter(isObject).map((f) => (typeof f.flight_number === "string" ? f.flight_number : "")),
  );
  // The searches the agent ran, grouped by what they searched (origin, destination, date).
  const groups = new Map<string, Option[]>();
  for (let i = 0; i < before.length; i += 1) {
    const reply = before[i];
    if (reply?.type !== "tool_response") continue;
    let callAt = i - 1;
    while (callAt >= 0 && before[callAt]?.type !== "tool_call") callAt -= 1;
    const query = callAt >= 0 ? parsedStep(event, callAt) : null;
    const options = optionsOf(parsedStep(event, i), i);
    if (!isObject(query) || options.length === 0) continue;
    const key = ["origin", "destination", "date"].map((k) => JSON.stringify(query[k] ?? null)).join("|");
    groups.set(key, [...(groups.get(key) ?? []), ...options]);
  }
  for (const options of groups.values()) {
    const chosen = options.find(
      (o) => o.flights.length > 0 && o.flights.every((f) => chosenNumbers.has(numberOf(f))),
    );
    const chosenPrice = chosen ? priceIn(chosen, cls) : undefined;
    if (!chosen || chosenPrice === undefined) continue;
    let best: { option: Option; price: number } | undefined;
    for (const o of options) {
      const price = priceIn(o, cls);
      if (price !== undefined && (!best || price < best.price)) best = { option: o, price };
    }
    if (best && best.price < chosenPrice)
      return {
        asked,
        cls,
        chosen: { flights: chosen.flights.map(numberOf), price: chosenPrice, step: chosen.step },
        cheaper: { flights: best.option.flights.map(numberOf), price: best.price, step: best.option.step },
      };
  }
  return null;
}
