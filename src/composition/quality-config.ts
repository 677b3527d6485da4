import type { Config } from "../config/config.js";
import {
  defaultQualityConfig,
  withQualityOverrides,
  type QualityConfig,
} from "../domain/quality/quality-config.js";

/**
 * The quality configuration every judge runs with — the processor, dreaming, `reflector score` and
 * `reflector reflect` — built here only: the defaults of the quality rules with the operator's
 * settings (`config.quality`: QUALITY_CONFIG_FILE's overrides, then the variables of their own)
 * laid over them. A new setting is one more line below, and every
 * judge sees it (test/unit/composition/quality-config.test.ts fails when a caller builds its own).
 */
export function buildQualityConfig(config: Pick<Config, "quality">): QualityConfig {
  const settings = config.quality;
  // The overrides were checked when the configuration was loaded: none of their problems is left.
  const base = settings.overrides
    ? withQualityOverrides(defaultQualityConfig, settings.overrides).config
    : defaultQualityConfig;
  return {
    ...base,
    maxAttempts: settings.maxAttempts,
    storageMinQuality: settings.storageMinQuality,
    depth: { ...base.depth, mode: settings.depthMode },
  };
}
