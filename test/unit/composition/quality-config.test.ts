import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildQualityConfig } from "../../../src/composition/quality-config.js";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { defaultQualityConfig } from "../../../src/domain/quality/quality-config.js";
import { filesMatching } from "../../support/source-files.js";

describe("the quality configuration is built from config in one place", () => {
  it("lays the operator's settings over the quality rules' defaults", () => {
    const config = loadConfig({
      REFLECTOR_EMBEDDINGS: "hashing",
      MAX_REFLECTION_ATTEMPTS: "5",
      STORAGE_MIN_QUALITY: "0.9",
      REFLECTOR_DEPTH_MODE: "literal",
    });
    const quality = buildQualityConfig(config);
    expect(quality.maxAttempts).toBe(5);
    expect(quality.storageMinQuality).toBe(0.9);
    expect(quality.depth.mode).toBe("literal");
    expect(quality.depth.minThreshold).toBe(defaultQualityConfig.depth.minThreshold);
    expect(quality.actionability).toEqual(defaultQualityConfig.actionability);
  });

  const overridesFile = (content: string) => {
    const file = join(mkdtempSync(join(tmpdir(), "quality-")), "quality.json");
    writeFileSync(file, content);
    return file;
  };

  it("lays QUALITY_CONFIG_FILE's overrides over the defaults, under the variables of their own", () => {
    const file = overridesFile(
      JSON.stringify({
        depth: { minThreshold: 0.6, indicators: { medium: ["because", "so that"] } },
        actionability: { vaguePatterns: ["do better"] },
        weights: { relevanceScore: 0.15, noveltyScore: 0.05 },
        rejectBelow: 0.4,
      }),
    );
    const quality = buildQualityConfig(
      loadConfig({
        REFLECTOR_EMBEDDINGS: "hashing",
        QUALITY_CONFIG_FILE: file,
        REFLECTOR_DEPTH_MODE: "literal",
      }),
    );
    expect(quality.depth.minThreshold).toBe(0.6);
    expect(quality.depth.mode).toBe("literal");
    expect(quality.depth.indicators.medium).toEqual(["because", "so that"]);
    expect(quality.depth.indicators.deep).toEqual(defaultQualityConfig.depth.indicators.deep);
    expect(quality.actionability.vaguePatterns).toEqual(["do better"]);
    expect(quality.weights).toMatchObject({ relevanceScore: 0.15, noveltyScore: 0.05, completeness: 0.2 });
    expect(quality.rejectBelow).toBe(0.4);
    expect(quality.storageMinQuality).toBe(0.8);
  });

  it("lists every problem of the overrides file at start-up", () => {
    const bad = overridesFile(
      JSON.stringify({
        storageMinQuality: 0.9,
        depth: { minTreshold: 0.6 },
        weights: { depthScore: "high" },
        actionability: { actionablePatterns: ["(a+)+$"] },
      }),
    );
    let problems: string[] = [];
    try {
      loadConfig({ REFLECTOR_EMBEDDINGS: "hashing", QUALITY_CONFIG_FILE: bad });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual([
      "QUALITY_CONFIG_FILE: storageMinQuality: set STORAGE_MIN_QUALITY instead",
      "QUALITY_CONFIG_FILE: depth.minTreshold: no such quality setting",
      'QUALITY_CONFIG_FILE: actionability.actionablePatterns.0: pattern "(a+)+$" refused: a quantified group holds a quantifier (it can backtrack without end)',
      "QUALITY_CONFIG_FILE: weights.depthScore: Invalid input: expected number, received string",
    ]);
    expect(() =>
      loadConfig({ REFLECTOR_EMBEDDINGS: "hashing", QUALITY_CONFIG_FILE: overridesFile("{ not json") }),
    ).toThrow(/QUALITY_CONFIG_FILE: .*JSON/);
  });

  it("with no settings, is the quality rules' defaults", () => {
    expect(buildQualityConfig(loadConfig({ REFLECTOR_EMBEDDINGS: "hashing" }))).toEqual(defaultQualityConfig);
  });

  it("no other file reads the operator's quality settings or merges the defaults itself", () => {
    expect(filesMatching(/\bconfig\.quality\b/)).toEqual(["composition/quality-config.ts"]);
    expect(filesMatching(/\.\.\.defaultQualityConfig\b/)).toEqual([]);
    expect(filesMatching(/\bwithQualityOverrides\(/)).toEqual([
      "composition/quality-config.ts",
      "config/quality-settings.ts",
      "domain/quality/quality-config.ts",
    ]);
    expect(filesMatching(/\bQualityConfig\.parse\(/)).toEqual(["domain/quality/quality-config.ts"]);
  });

  it("every judge built from config takes the builder's configuration", () => {
    expect(filesMatching(/\bbuildQualityConfig\(config\)/)).toEqual([
      "cli/reflect-command.ts",
      "cli/score-command.ts",
      "composition/builders.ts",
      "composition/task-processor.ts",
      // The start's warm-up judges synthetic failures as the pipeline will.
      "composition/warm-up.ts",
    ]);
  });
});
