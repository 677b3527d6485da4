import { readFileSync } from "node:fs";
import { z } from "zod";
import { defaultQualityConfig, withQualityOverrides } from "../domain/quality/quality-config.js";

/**
 * QUALITY_CONFIG_FILE: a JSON file of overrides to the quality rules (docs/configuration.md#quality-rules),
 * read and checked once at start-up so that every problem is listed with the rest.
 */
export const qualitySettingsEnv = {
  QUALITY_CONFIG_FILE: z.string().min(1).optional(),
};

export interface QualitySettings {
  storageMinQuality: number;
  maxAttempts: number;
  depthMode: "grounded" | "literal";
  /** QUALITY_CONFIG_FILE's JSON, checked against the quality rules' schema. */
  overrides?: Record<string, unknown>;
}

export function qualityOverridesOf(file: string | undefined): {
  overrides: Record<string, unknown> | undefined;
  problems: string[];
} {
  if (file === undefined) return { overrides: undefined, problems: [] };
  let overrides: unknown;
  try {
    overrides = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    return { overrides: undefined, problems: [`QUALITY_CONFIG_FILE: ${(err as Error).message}`] };
  }
  const { problems } = withQualityOverrides(defaultQualityConfig, overrides);
  if (problems.length > 0)
    return { overrides: undefined, problems: problems.map((p) => `QUALITY_CONFIG_FILE: ${p}`) };
  return { overrides: overrides as Record<string, unknown>, problems: [] };
}
