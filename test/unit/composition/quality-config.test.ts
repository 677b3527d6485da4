import { describe, expect, it } from "vitest";
import { buildQualityConfig } from "../../../src/composition/quality-config.js";
import { loadConfig } from "../../../src/config/config.js";
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

  it("with no settings, is the quality rules' defaults", () => {
    expect(buildQualityConfig(loadConfig({ REFLECTOR_EMBEDDINGS: "hashing" }))).toEqual(defaultQualityConfig);
  });

  it("no other file reads the operator's quality settings or merges the defaults itself", () => {
    expect(filesMatching(/\bconfig\.quality\b/)).toEqual(["composition/quality-config.ts"]);
    expect(filesMatching(/\.\.\.defaultQualityConfig\b/)).toEqual(["composition/quality-config.ts"]);
    expect(filesMatching(/\bQualityConfig\.parse\(/)).toEqual(["domain/quality/quality-config.ts"]);
  });

  it("every judge built from config takes the builder's configuration", () => {
    expect(filesMatching(/\bbuildQualityConfig\(config\)/)).toEqual([
      "cli/reflect-command.ts",
      "cli/score-command.ts",
      "composition/builders.ts",
      "composition/task-processor.ts",
    ]);
  });
});
