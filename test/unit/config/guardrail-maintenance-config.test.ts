import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

describe("guardrail and maintenance settings", () => {
  it("default to the documented guardrail thresholds and keep maintenance off", () => {
    const config = loadConfig({});
    expect(config.guardrails).toEqual({
      alignmentThreshold: 0.75,
      driftThreshold: 0.25,
      maxReruns: 3,
      fatigueCriticalThreshold: 0.5,
      biasRepetitionThreshold: 3,
    });
    expect(config.maintenance).toEqual({
      dreamIntervalMs: 0,
      dreamMinImportance: 0.7,
      pruneIntervalMs: 0,
      pruneOlderThanDays: 90,
      pruneMaxImportance: 0.3,
    });
  });

  it("lists every bad value at once", () => {
    let error: unknown;
    try {
      loadConfig({ GUARDRAIL_MAX_RERUNS: "-1", DREAM_MIN_IMPORTANCE: "2", PRUNE_INTERVAL_MS: "soon" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    expect(problems).toContain("GUARDRAIL_MAX_RERUNS");
    expect(problems).toContain("DREAM_MIN_IMPORTANCE");
    expect(problems).toContain("PRUNE_INTERVAL_MS");
  });
});
