import { z } from "zod";

/** Dreaming and pruning in the processor (src/maintenance/): an interval of 0 is not scheduled. */
export const maintenanceEnv = {
  DREAM_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
  DREAM_MIN_IMPORTANCE: z.coerce.number().min(0).max(1).default(0.7),
  PRUNE_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
  PRUNE_OLDER_THAN_DAYS: z.coerce.number().int().min(1).default(90),
  PRUNE_MAX_IMPORTANCE: z.coerce.number().min(0).max(1).default(0.3),
};

export interface MaintenanceSettings {
  dreamIntervalMs: number;
  dreamMinImportance: number;
  pruneIntervalMs: number;
  pruneOlderThanDays: number;
  pruneMaxImportance: number;
}

type MaintenanceEnv = { [K in keyof typeof maintenanceEnv]: z.infer<(typeof maintenanceEnv)[K]> };

export function maintenanceOf(e: MaintenanceEnv): MaintenanceSettings {
  return {
    dreamIntervalMs: e.DREAM_INTERVAL_MS,
    dreamMinImportance: e.DREAM_MIN_IMPORTANCE,
    pruneIntervalMs: e.PRUNE_INTERVAL_MS,
    pruneOlderThanDays: e.PRUNE_OLDER_THAN_DAYS,
    pruneMaxImportance: e.PRUNE_MAX_IMPORTANCE,
  };
}
