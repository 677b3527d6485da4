import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../../../src/adapters/embedding/hashing-embedder.js";
import { createHeuristicGenerator } from "../../../src/adapters/llm/heuristic-generator.js";
import { scoreReflection } from "../../../src/cli/score.js";
import type { ReflectionOutcome } from "../../../src/domain/contracts/index.js";
import { generateHeuristicReflection } from "../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { defaultQualityConfig } from "../../../src/domain/quality/quality-config.js";
import { exampleEvent } from "../../support/examples.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** A child process through tsx that loads the embedding model: seconds on a busy machine. */
const cliTimeoutMs = 30_000;

function cli(args: string[], stdin: string) {
  const run = spawnSync(process.execPath, ["--import", "tsx", "test/support/run-cli.ts", ...args], {
    cwd: root,
    input: stdin,
    encoding: "utf8",
    env: { ...process.env, LOG_LEVEL: "silent" },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

// A "good" hotel-booking reflection, in the quality rules' field names.
const goodHotel = {
  analysis:
    "The hotel booking failed because the agent prioritized price over user's explicit preference for ratings. " +
    "Root cause: Preference parsing ignored 'highly rated' constraint, defaulting to budget optimization. " +
    "The underlying issue is the system assumes cost minimization as primary goal without checking user priorities.",
  patterns_identified: ["Budget bias in travel bookings"],
  strategy_adjustments: [
    "Add constraint: min_rating >= 4.0 when user mentions 'highly rated'",
    "Update ranking weights: rating_weight = 0.6, price_weight = 0.4 for quality-focused queries",
    "Implement preference extraction before search",
  ],
  learning:
    "Always extract and respect explicit quality preferences before applying default optimization strategies.",
};

describe("reflector score", () => {
  it("scores a hotel reflection by the quality rules read literally, with patterns unproven offline", async () => {
    const literal = {
      ...defaultQualityConfig,
      depth: { ...defaultQualityConfig.depth, mode: "literal" as const },
    };
    const result = await scoreReflection(
      { reflection: goodHotel, task: { description: "Book a highly rated hotel in Paris" } },
      { embedder: createHashingEmbedder(), history: null, quality: literal },
    );
    expect(result.metrics.completeness).toBe(1);
    // Only "Add constraint: …" matches an executable pattern; "Update …"/"Implement …" match neither list.
    expect(result.metrics.actionabilityScore).toBe(0.6);
    expect(result.metrics.depthScore).toBeGreaterThanOrEqual(0.7);
    expect(result.invalidPatterns).toEqual(["Budget bias in travel bookings"]);
    expect(result.verdict).toBe("accepted_with_warnings");
    expect(result.notes.join(" ")).toMatch(/no --tenant given/);
  });

  it("grounds the analysis in what the task holds: without a trace it cannot reach the why", async () => {
    const result = await scoreReflection(
      { reflection: goodHotel, task: { description: "Book a highly rated hotel in Paris" } },
      { embedder: createHashingEmbedder(), history: null },
    );
    // Only 'highly rated' is in the task; "root cause", "underlying issue", "assumes" name nothing.
    expect(result.metrics.depthScore).toBeGreaterThanOrEqual(0.5);
    expect(result.metrics.depthScore).toBeLessThan(0.7);
    expect(result.wouldStore).toBe(false);
    expect(result.notes.join(" ")).toMatch(/no event given/);
  });

  it("gives the storage answer the pipeline gives for the same event and reflection", async () => {
    for (const prefix of ["01", "06"]) {
      const event = exampleEvent(prefix);
      const store = createFakeStore();
      const processor = createOfflineProcessor(
        { store: store.store, index: createFakeIndex().index },
        { generator: createHeuristicGenerator() },
      );
      const outcome = (await processor.process(event)).outputs.find((o) => o.role !== "loopDecision")
        ?.value as ReflectionOutcome;
      const scored = await scoreReflection(
        { reflection: generateHeuristicReflection(event), event },
        { embedder: createHashingEmbedder(), history: null },
      );
      expect(scored.qualityScore, prefix).toBe(outcome.qualityScore);
      expect(scored.verdict, prefix).toBe(outcome.verdict);
      expect(scored.wouldStore, prefix).toBe(outcome.stored);
    }
  });

  it("counts stored history for patterns when a tenant is given", async () => {
    const result = await scoreReflection(
      { reflection: goodHotel },
      {
        embedder: createHashingEmbedder(),
        history: {
          tenantId: "t",
          store: {
            patternEvidence: (_tenant, patterns) =>
              Promise.resolve(new Map(patterns.map((p) => [p, { occurrences: 4, total: 4 }]))),
            nearbyReflections: () => Promise.resolve([]),
          },
        },
      },
    );
    expect(result.invalidPatterns).toEqual([]);
    expect(result.metrics.patternValidity).toBe(1);
  });

  it(
    "prints metrics, violations, score and verdict as JSON from stdin",
    () => {
      const input = {
        reflection: {
          analysis: "It failed.",
          strategy_adjustments: ["do better next time"],
          learning: "be careful",
        },
      };
      const run = cli(["score"], JSON.stringify(input));
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as {
        verdict: string;
        missingFields: string[];
        violations: string[];
        errors: string[];
      };
      expect(out.verdict).toBe("rejected");
      expect(out.errors).toHaveLength(out.violations.length);
      expect(out.errors.slice(0, 3)).toEqual([
        "IncompleteReflectionError",
        "InsufficientDepthError",
        "NotActionableError",
      ]);
      // No patterns is an answer (none seen yet), not a missing part.
      expect(out.missingFields).toEqual(["analysis", "learning"]);
      expect(out.violations.some((v) => v.startsWith("Not actionable"))).toBe(true);
    },
    cliTimeoutMs,
  );

  it(
    "refuses input that is not JSON or not the expected shape with exit code 2",
    () => {
      expect(cli(["score"], "not json")).toMatchObject({ code: 2 });
      const bad = cli(["score"], JSON.stringify({ reflection: { patterns: "one" } }));
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/reflection\.patterns/);
    },
    cliTimeoutMs,
  );
});
