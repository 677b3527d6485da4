import type { Actor, DetourContext, DetourKind, PlanSheet, StepSpec } from "./builder.js";
import type { Rng } from "./random.js";

export type Domain = "web" | "coding" | "data" | "planning";

/** Everything needed to lay out one failing trace; the assembler adds plan, detours and the final answer. */
export interface Scenario {
  question: string;
  /** The agent's (wrong) final answer. */
  answer: string;
  style: "magentic" | "groupchat";
  team: Actor[];
  sheet: PlanSheet;
  opening: StepSpec[];
  core: StepSpec[];
  /** The core already ends with the final answer (the failing step may be the answer itself). */
  finalInCore?: boolean;
  detourKind: DetourKind;
  detourCtx: DetourContext;
}

export interface BuildContext {
  rng: Rng;
  /** The failure mode being built (openings may depend on it, e.g. the data schema). */
  mode: string;
  /** Make one page dump or file listing tens of kilobytes long. */
  big: boolean;
  /** Which wording of the question to use. */
  wording: number;
}

export interface Family<V> {
  id: string;
  domain: Domain;
  /** At least four: one per mode, plus one for a recurrence. */
  variants: readonly V[];
  /** Exactly three failure modes; each (family, mode) is one root cause. */
  modes: readonly [string, string, string];
  build(mode: string, variant: V, ctx: BuildContext): Scenario;
}

export interface AnyFamily {
  id: string;
  domain: Domain;
  modes: readonly [string, string, string];
  variantCount: number;
  build(mode: string, variantIndex: number, ctx: BuildContext): Scenario;
}

export function defineFamily<V>(family: Family<V>): AnyFamily {
  return {
    id: family.id,
    domain: family.domain,
    modes: family.modes,
    variantCount: family.variants.length,
    build(mode, variantIndex, ctx) {
      const variant = family.variants[variantIndex % family.variants.length];
      if (variant === undefined) throw new Error(`${family.id}: no variant ${variantIndex}`);
      return family.build(mode, variant, ctx);
    },
  };
}

export function unknownMode(familyId: string, mode: string): never {
  throw new Error(`${familyId}: unknown mode ${mode}`);
}
