import type { TaskCompleted } from "../../../contracts/index.js";
import {
  isObject,
  parsedStep,
  sentencesOf,
  textOf as text,
  toolReplies,
  userActor,
  type Json,
} from "../../argument-sources.js";

/**
 * A change of flights that moves a leg off its date although the user asked to keep the dates
 * ("on the same dates"): the reservation's record before the call gives each leg's date (the
 * outbound leaves the origin on the first flight's date; a round trip's return leaves the
 * destination on the date of the first flight from there), and the searches the call's flights
 * came from give the new legs' dates (a search from the origin is the outbound, one back to the
 * origin the return). Nothing is claimed when the user named the new date, when a flight of the
 * call is in no search, or when the record is not seen.
 */
export interface DateMiss {
  /** The user's words that asked for the same dates. */
  asked: string;
  leg: "outbound" | "return";
  /** The leg's date in the reservation's record, and where that record is. */
  was: { date: string; from: string; step: number };
  /** The date the call takes, with the flight and the search it came from. */
  now: { date: string; flight: string; step: number };
}

const months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** Whether a text names a date (`2024-05-20`, "May 20", "20 May", "5/20"). */
function namesDate(said: string, date: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return false;
  const month = months[Number(m[2]) - 1] ?? "";
  const day = String(Number(m[3]));
  return (
    said.includes(date) ||
    new RegExp(
      `\\b${month}[a-z]*\\.?\\s+${day}(st|nd|rd|th)?\\b|\\b${day}(st|nd|rd|th)?\\s+(of\\s+)?${month}|\\b${String(Number(m[2]))}/${day}\\b`,
      "i",
    ).test(said)
  );
}

export function dateMiss(event: TaskCompleted, index: number): DateMiss | null {
  const args = parsedStep(event, index);
  if (!isObject(args) || !Array.isArray(args.flights)) return null;
  const id = text(args.reservation_id);
  if (!id) return null;
  const users = event.events.slice(0, index).filter((e) => e.actor && userActor.test(e.actor));
  const asked = users
    .flatMap((e) => sentencesOf(e.content))
    .find((s) => /\bsame (dates?|days?)\b/i.test(s) && !/\b(not|n't|never)\b[^.]{0,20}\bsame\b/i.test(s));
  if (!asked) return null;
  // The reservation as last read before the call, and each search option's query.
  let record: { value: Json; step: number } | undefined;
  const searched = new Map<string, { query: Json; step: number }>();
  for (const { step: i, reply, query } of toolReplies(event, index)) {
    if (isObject(reply) && reply.reservation_id === id && Array.isArray(reply.flights))
      record = { value: reply, step: i };
    if (!Array.isArray(reply) || !isObject(query)) continue;
    for (const item of reply as unknown[])
      for (const f of (Array.isArray(item) ? (item as unknown[]) : [item]).filter(isObject))
        searched.set(`${text(f.flight_number)}@${text(f.date) || text(query.date)}`, { query, step: i });
  }
  if (!record) return null;
  const r = record.value;
  const old = (r.flights as unknown[]).filter(isObject);
  const origin = text(r.origin);
  const destination = text(r.destination);
  const wasOut = text(old[0]?.date);
  const wasBack = /round/i.test(text(r.flight_type))
    ? text(old.find((f) => text(f.origin) === destination)?.date)
    : "";
  const userText = users.map((e) => e.content).join("\n");
  for (const f of args.flights.filter(isObject)) {
    const key = `${text(f.flight_number)}@${text(f.date)}`;
    const from = searched.get(key);
    if (!from) return null;
    const date = text(from.query.date);
    const leg =
      text(from.query.origin) === origin
        ? "outbound"
        : text(from.query.destination) === origin
          ? "return"
          : null;
    const was = leg === "outbound" ? wasOut : leg === "return" ? wasBack : "";
    if (!leg || !was || !date || date === was || namesDate(userText, date)) continue;
    return {
      asked: asked.trim(),
      leg,
      was: { date: was, from: leg === "outbound" ? origin : destination, step: record.step },
      now: { date, flight: text(f.flight_number), step: from.step },
    };
  }
  return null;
}
