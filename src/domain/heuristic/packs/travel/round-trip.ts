import type { TaskCompleted } from "../../../contracts/index.js";
import { isObject, parsedStep, textOf as text, toolReplies } from "../../argument-sources.js";

/**
 * A round trip booked with flights that, by the agent's own search results, never come back: the
 * call says `round_trip` from an origin, its first flight leaves from there, and none of its flights
 * lands there (the return leg was searched, and taken, in the outbound direction). Claimed only
 * when every flight of the call is found, with its route, in a search result on its date.
 */
export interface ReturnMiss {
  origin: string;
  destination: string;
  /** Each flight of the call with its route, as the search showed it. */
  legs: { flight: string; date: string; from: string; to: string; step: number }[];
}

export function returnMiss(event: TaskCompleted, index: number): ReturnMiss | null {
  const args = parsedStep(event, index);
  if (!isObject(args) || !/round/i.test(text(args.flight_type)) || !Array.isArray(args.flights)) return null;
  const origin = text(args.origin);
  const destination = text(args.destination);
  if (!origin || !destination || origin === destination) return null;
  // Every flight the agent's searches listed, by number and date, with its route.
  const routes = new Map<string, { from: string; to: string; step: number }>();
  for (const { step: i, reply: result, query } of toolReplies(event, index)) {
    if (!isObject(query) || !Array.isArray(result)) continue;
    const flights = (result as unknown[])
      .flatMap((item): unknown[] => (Array.isArray(item) ? (item as unknown[]) : [item]))
      .filter(isObject);
    for (const f of flights) {
      const date = text(f.date) || text(query.date);
      if (text(f.flight_number) && text(f.origin) && text(f.destination) && date)
        routes.set(`${text(f.flight_number)}@${date}`, {
          from: text(f.origin),
          to: text(f.destination),
          step: i,
        });
    }
  }
  const legs: ReturnMiss["legs"] = [];
  for (const f of args.flights) {
    if (!isObject(f)) return null;
    const route = routes.get(`${text(f.flight_number)}@${text(f.date)}`);
    if (!route) return null;
    legs.push({ flight: text(f.flight_number), date: text(f.date), ...route });
  }
  if (legs.length < 2 || legs[0]?.from !== origin || legs.some((l) => l.to === origin)) return null;
  return { origin, destination, legs };
}
