import { generalCallChecks, type CallCheck } from "../call-mismatch.js";
import { travelPack } from "./travel/travel-pack.js";

/**
 * Knowledge of one domain, as lists of checks an operator enables by name
 * (`REFLECTOR_HEURISTIC_PACKS`). The general checks hold across domains; a pack's only where its
 * domain's words are. Each pack has its own folder under packs/.
 */
export const heuristicPacks = { travel: travelPack } as const satisfies Record<string, readonly CallCheck[]>;

export type HeuristicPackName = keyof typeof heuristicPacks;

export const heuristicPackNames = Object.keys(heuristicPacks) as HeuristicPackName[];

/** The checks of the enabled packs, in the order named, then the general ones. */
export function callChecksWith(packs: readonly HeuristicPackName[]): readonly CallCheck[] {
  return [...packs.flatMap((name) => heuristicPacks[name]), ...generalCallChecks];
}
