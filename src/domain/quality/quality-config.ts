import { z } from "zod";
import { patternProblem } from "./pattern-safety.js";

/**
 * The quality rules' thresholds, indicator lists, patterns and weights, with their defaults
 * (docs/specification.md#quality-metrics). One object so operators can tune them and tests can see
 * every number.
 */
export const DepthMode = z.enum(["grounded", "literal"]);
export type DepthMode = z.infer<typeof DepthMode>;

/**
 * A quality pattern, refused when searching it could cost more than linear time in the text
 * (pattern-safety.ts); the defaults below pass and are not measured again.
 */
const defaultPatterns = new Set([
  "change .+ to .+",
  "add constraint: .+",
  "set .+ = .+",
  "increase .+ by .+",
  "decrease .+ from .+ to .+",
  "remove .+",
  "filter .+ where .+",
  "do better",
  "improve",
  "try harder",
  "be more careful",
  "pay attention",
]);
const checked = new Map<string, string | null>();
const safePattern = z.string().superRefine((pattern, ctx) => {
  if (defaultPatterns.has(pattern)) return;
  let problem = checked.get(pattern);
  if (problem === undefined) {
    problem = patternProblem(pattern);
    checked.set(pattern, problem);
  }
  if (problem)
    ctx.addIssue({ code: "custom", message: `pattern ${JSON.stringify(pattern)} refused: ${problem}` });
});

export const QualityConfig = z.object({
  depth: z.object({
    /**
     * `grounded` (default): the levels are earned by specifics of the trace (grounded-depth.ts);
     * `literal`: the quality rules' indicator words, read literally (assess-depth.ts).
     */
    mode: DepthMode.default("grounded"),
    minThreshold: z.number().default(0.7),
    levels: z
      .object({ surface: z.number(), shallow: z.number(), medium: z.number(), deep: z.number() })
      .default({ surface: 0.3, shallow: 0.5, medium: 0.7, deep: 0.9 }),
    indicators: z
      .object({
        surface: z.array(z.string()),
        shallow: z.array(z.string()),
        medium: z.array(z.string()),
        deep: z.array(z.string()),
      })
      .default({
        surface: ["it failed", "it didn't work", "error occurred", "task unsuccessful"],
        shallow: ["wrong result", "incorrect output", "selected wrong", "chose bad option"],
        medium: ["because", "due to", "caused by", "resulted from", "prioritized", "assumed", "overlooked"],
        deep: [
          "strategy",
          "approach",
          "methodology",
          "reasoning",
          "conflicting",
          "contradictory",
          "fundamental flaw",
          "incorrect assumption",
          "systematic error",
        ],
      }),
    /** Indicators needed at a level for it to count. */
    minDeepIndicators: z.number().int().default(2),
    minMediumIndicators: z.number().int().default(2),
    minShallowIndicators: z.number().int().default(1),
    /** Longer analyses earn up to `maxLengthBonus`, at one point per `lengthBonusChars` characters. */
    maxLengthBonus: z.number().default(0.1),
    lengthBonusChars: z.number().default(5000),
    /** Analyses shorter than this score `shortScore` whatever they say. */
    shortLengthChars: z.number().int().default(50),
    shortScore: z.number().default(0.2),
    grounded: z
      .object({
        /** Grounded specifics an analysis needs for the deepest level. */
        minGroundedForDeep: z.number().int(),
        /**
         * An analysis with at least `minUngroundedToDoubt` specifics the trace does not hold, making
         * at least `maxUngroundedShare` of all its specifics, is about another run.
         */
        minUngroundedToDoubt: z.number().int(),
        maxUngroundedShare: z.number(),
      })
      .default({ minGroundedForDeep: 3, minUngroundedToDoubt: 3, maxUngroundedShare: 0.3 }),
  }),
  actionability: z.object({
    minThreshold: z.number().default(0.8),
    actionablePatterns: z
      .array(safePattern)
      .default([
        "change .+ to .+",
        "add constraint: .+",
        "set .+ = .+",
        "increase .+ by .+",
        "decrease .+ from .+ to .+",
        "remove .+",
        "filter .+ where .+",
      ]),
    vaguePatterns: z
      .array(safePattern)
      .default(["do better", "improve", "try harder", "be more careful", "pay attention"]),
  }),
  patternValidity: z.object({
    minThreshold: z.number().default(0.75),
    minOccurrences: z.number().int().default(3),
    /** Share of a pattern's keywords an episode must contain to count as an occurrence. */
    keywordMatchShare: z.number().default(0.7),
    /** Episodes retrieved per pattern. */
    topK: z.number().int().default(50),
  }),
  relevance: z.object({ minThreshold: z.number().default(0.6) }),
  novelty: z.object({ minThreshold: z.number().default(0.3) }),
  completeness: z.object({
    minThreshold: z.number().default(0.9),
    /** A required text field counts when it is longer than this. */
    minTextChars: z.number().int().default(10),
  }),
  weights: z
    .object({
      completeness: z.number(),
      depthScore: z.number(),
      actionabilityScore: z.number(),
      relevanceScore: z.number(),
      noveltyScore: z.number(),
    })
    .default({
      completeness: 0.2,
      depthScore: 0.3,
      actionabilityScore: 0.3,
      relevanceScore: 0.1,
      noveltyScore: 0.1,
    }),
  /** Below this score a reflection is rejected. */
  rejectBelow: z.number().default(0.5),
  /** Quality ≥ 0.8 to be stored. Separate from the verdict on purpose. */
  storageMinQuality: z.number().default(0.8),
  maxAttempts: z.number().int().min(1).default(3),
  /** The improvement prompt's minimum lengths, told to generators on retries. */
  guidance: z
    .object({ analysisMinChars: z.number().default(100), learningMinChars: z.number().default(50) })
    .default({
      analysisMinChars: 100,
      learningMinChars: 50,
    }),
});
export type QualityConfig = z.infer<typeof QualityConfig>;

export const defaultQualityConfig: QualityConfig = QualityConfig.parse({
  depth: {},
  actionability: {},
  patternValidity: {},
  relevance: {},
  novelty: {},
  completeness: {},
});

/** Settings with a variable of their own (STORAGE_MIN_QUALITY, …): refused in an overrides file. */
const ownVariables: Record<string, string> = {
  storageMinQuality: "STORAGE_MIN_QUALITY",
  maxAttempts: "MAX_REFLECTION_ATTEMPTS",
  "depth.mode": "REFLECTOR_DEPTH_MODE",
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function merged(base: unknown, over: unknown, path: string, problems: string[]): unknown {
  if (!isObject(over)) return over;
  if (!isObject(base)) {
    problems.push(`${path || "(file)"}: no such quality setting`);
    return base;
  }
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const at = path ? `${path}.${key}` : key;
    if (ownVariables[at]) problems.push(`${at}: set ${ownVariables[at]} instead`);
    else if (!(key in base)) problems.push(`${at}: no such quality setting`);
    else out[key] = merged(base[key], value, at, problems);
  }
  return out;
}

/**
 * The quality rules with an operator's overrides laid over them: any subset of the configuration
 * above (thresholds, weights, indicator words, patterns, …) by the same names, checked by the same
 * schema. A list replaces the default list whole. Unknown names, a setting that has a variable of
 * its own, and values the schema refuses are listed as problems rather than half applied.
 */
export function withQualityOverrides(
  base: QualityConfig,
  overrides: unknown,
): { config: QualityConfig; problems: string[] } {
  const problems: string[] = [];
  if (!isObject(overrides))
    return { config: base, problems: ["the quality overrides must be a JSON object"] };
  const candidate = merged(base, overrides, "", problems);
  const parsed = QualityConfig.safeParse(candidate);
  if (!parsed.success)
    problems.push(...parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`));
  return problems.length > 0 || !parsed.success
    ? { config: base, problems }
    : { config: parsed.data, problems };
}
