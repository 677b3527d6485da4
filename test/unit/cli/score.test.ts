import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../../../src/adapters/embedding/hashing-embedder.js";
import { scoreReflection } from "../../../src/cli/score.js";

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
  it("scores a hotel reflection by the quality rules, with patterns unproven offline", async () => {
    const result = await scoreReflection(
      { reflection: goodHotel, task: { description: "Book a highly rated hotel in Paris" } },
      { embedder: createHashingEmbedder(), history: null },
    );
    expect(result.metrics.completeness).toBe(1);
    // Only "Add constraint: …" matches an executable pattern; "Update …"/"Implement …" match neither list.
    expect(result.metrics.actionabilityScore).toBe(0.6);
    expect(result.metrics.depthScore).toBeGreaterThanOrEqual(0.7);
    expect(result.invalidPatterns).toEqual(["Budget bias in travel bookings"]);
    expect(result.verdict).toBe("accepted_with_warnings");
    expect(result.notes.join(" ")).toMatch(/no --tenant given/);
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
      };
      expect(out.verdict).toBe("rejected");
      expect(out.missingFields).toEqual(["analysis", "patterns_identified", "learning"]);
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
