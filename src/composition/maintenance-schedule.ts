import type { Maintenance } from "./builders.js";
import type { Config } from "../config/config.js";
import { createMaintenanceSchedule } from "../maintenance/maintenance-schedule.js";
import type { Logger } from "../observability/logger.js";

/** Dreaming (full mode only) and pruning on a timer, one replica at a time (advisory locks). */
export function buildMaintenanceSchedule(config: Config, maintenance: Maintenance, logger: Logger) {
  const m = config.maintenance;
  return createMaintenanceSchedule({
    exclusive: maintenance.exclusive,
    logger,
    jobs: [
      {
        name: "dream",
        intervalMs: config.mode === "full" ? m.dreamIntervalMs : 0,
        run: () => maintenance.dream({ tenantId: null, minImportance: m.dreamMinImportance, dryRun: false }),
      },
      {
        name: "prune",
        intervalMs: m.pruneIntervalMs,
        run: () =>
          maintenance.prune({
            tenantId: null,
            olderThanDays: m.pruneOlderThanDays,
            maxImportance: m.pruneMaxImportance,
            dryRun: false,
          }),
      },
    ],
  });
}
