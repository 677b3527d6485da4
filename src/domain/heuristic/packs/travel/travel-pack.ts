import type { CallCheck } from "../../call-mismatch.js";
import { budgetMiss } from "./budget-cap.js";
import { choiceMiss } from "./choice-criteria.js";
import { policyBreach } from "./policy-conditions.js";
import { returnMiss } from "./round-trip.js";
import { dateMiss } from "./same-dates.js";

/**
 * The travel pack: what an airline or travel agent's state-changing call may do wrong that only
 * a reading of travel policies and searches shows — a policy condition visibly unmet (cancellation
 * windows, bag allowances per cabin and tier, insurance), an option the user's criteria and the
 * agent's own search rule out, a round trip that never returns, a charge over the user's cap, a
 * leg moved off the date the user kept. Written on τ-bench's airline runs; off by default, enabled
 * with `REFLECTOR_HEURISTIC_PACKS=travel`. Its checks run before the general ones.
 */
export const travelPack: readonly CallCheck[] = [
  {
    kind: "breaks_policy",
    find: (c) => {
      const breach = policyBreach(c.event, c.index, c.asks);
      return breach
        ? {
            mismatch: { kind: "breaks_policy", values: breach.values, required: breach.required },
            policy: breach.sentence,
          }
        : null;
    },
  },
  {
    kind: "misses_choice",
    find: (c) => {
      const missed = choiceMiss(c.event, c.index);
      return missed ? { mismatch: { kind: "misses_choice", ...missed } } : null;
    },
  },
  {
    kind: "no_return",
    find: (c) => {
      const oneWay = returnMiss(c.event, c.index);
      return oneWay ? { mismatch: { kind: "no_return", ...oneWay } } : null;
    },
  },
  {
    kind: "over_budget",
    find: (c) => {
      const dearer = budgetMiss(c.event, c.index);
      return dearer ? { mismatch: { kind: "over_budget", ...dearer } } : null;
    },
  },
  {
    kind: "moves_date",
    find: (c) => {
      const moved = dateMiss(c.event, c.index);
      return moved ? { mismatch: { kind: "moves_date", ...moved } } : null;
    },
  },
];
