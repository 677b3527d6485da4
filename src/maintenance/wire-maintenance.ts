import type { Redis } from "ioredis";
import type pg from "pg";
import {
  createPgMaintenanceStore,
  createPgExclusiveRunner,
} from "../adapters/postgres/pg-maintenance-store.js";
import { createPgReflectionStore } from "../adapters/postgres/pg-reflection-store.js";
import { createRedisSignatureEvictor } from "../adapters/redis/redis-signature-evictor.js";
import type { Config } from "../config/config.js";
import { defaultQualityConfig } from "../domain/quality/quality-config.js";
import { runsPeriodicReflection } from "../domain/select-for-reflection.js";
import type { Clock, Embedder, ReflectionGenerator } from "../pipeline/ports.js";
import { runDream, type DreamOptions, type DreamReport } from "./dream.js";
import type { ExclusiveRunner } from "./maintenance-ports.js";
import { createHeuristicPatternGenerator, createLlmPatternGenerator } from "./pattern-generators.js";
import { runPrune, type PruneOptions, type PruneReport } from "./prune.js";

export interface MaintenanceWiring {
  pool: pg.Pool;
  redis: Redis;
  generator: ReflectionGenerator;
  embedder: Embedder;
  clock: Clock;
}

export interface Maintenance {
  exclusive: ExclusiveRunner;
  generatorName: string;
  dream(options: DreamOptions): Promise<DreamReport>;
  prune(options: PruneOptions): Promise<PruneReport>;
}

/**
 * Dreaming and pruning built from config, shared by the processor's schedule (app.ts) and the
 * CLI. The pattern generator follows the reflection generator: a model when one is configured,
 * otherwise the offline synthesis, and the stored rows say which.
 */
export function wireMaintenance(config: Config, deps: MaintenanceWiring): Maintenance {
  const store = createPgMaintenanceStore(
    deps.pool,
    createPgReflectionStore(deps.pool, { embeddingModel: deps.embedder.name }),
    deps.embedder.name,
  );
  const generator =
    deps.generator.name === "heuristic"
      ? createHeuristicPatternGenerator()
      : createLlmPatternGenerator(deps.generator);
  const quality = {
    ...defaultQualityConfig,
    maxAttempts: config.quality.maxAttempts,
    storageMinQuality: config.quality.storageMinQuality,
  };
  return {
    exclusive: createPgExclusiveRunner(deps.pool),
    generatorName: generator.name,
    dream: (options) => {
      // Lite mode never reflects on its own initiative.
      if (!runsPeriodicReflection(config.mode)) {
        return Promise.reject(new Error("dreaming runs in full mode only (REFLECTOR_MODE=lite)"));
      }
      return runDream({ store, generator, embedder: deps.embedder, quality, clock: deps.clock }, options);
    },
    prune: (options) =>
      runPrune(
        {
          store,
          evictor: createRedisSignatureEvictor(deps.redis, { keyPrefix: config.redis.keyPrefix }),
          clock: deps.clock,
        },
        options,
      ),
  };
}
