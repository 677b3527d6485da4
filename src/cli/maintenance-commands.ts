import { InvalidArgumentError, type Command } from "commander";
import pg from "pg";
import { pgClientConfig } from "../adapters/postgres/pg-connection.js";
import { createRedisClient } from "../adapters/redis/redis-connection.js";
import { createLlmAdapters } from "../adapters/llm/llm-adapters.js";
import { configOrExit } from "./config-or-exit.js";
import { wireMaintenance, type Maintenance } from "../maintenance/wire-maintenance.js";

function number(min: number, max: number, integer = false) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
      throw new InvalidArgumentError(
        `expected ${integer ? "an integer" : "a number"} from ${String(min)} to ${String(max)}`,
      );
    }
    return value;
  };
}

/**
 * Runs one maintenance job under its advisory lock and prints the report as JSON. Another
 * replica (or CronJob) holding the lock is not an error: the run is skipped and says so.
 */
async function runJob<T>(name: string, work: (maintenance: Maintenance) => Promise<T>): Promise<void> {
  const config = configOrExit();
  const pool = new pg.Pool({
    ...pgClientConfig({ databaseUrl: config.databaseUrl, sslCaFile: config.databaseSslCaFile }),
    max: 4,
  });
  const redis = createRedisClient(config.redis, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    const llm = createLlmAdapters(config);
    const maintenance = wireMaintenance(config, {
      pool,
      redis,
      generator: llm.generator,
      embedder: llm.embedder,
      clock: { now: () => new Date() },
    });
    const result = await maintenance.exclusive(name, () => work(maintenance));
    if (!result.ran) {
      process.stderr.write(`reflector ${name}: skipped, another process holds the ${name} lock\n`);
      return;
    }
    console.log(JSON.stringify(result.value, null, 2));
  } catch (err) {
    process.stderr.write(`reflector ${name}: ${(err as Error).message}\n`);
    process.exitCode = 1;
  } finally {
    await pool.end();
    redis.disconnect();
  }
}

/** `reflector dream` and `reflector prune` (seed 002); docs/loops-and-maintenance.md. */
export function registerMaintenanceCommands(program: Command): void {
  program
    .command("dream")
    .description(
      "full mode: store pattern-level lessons drawn from each tenant's high-importance reflections",
    )
    .option("--tenant <tenantId>", "only this tenant (default: every tenant)")
    .option(
      "--min-importance <x>",
      "importance from which a reflection takes part (default: DREAM_MIN_IMPORTANCE)",
      number(0, 1),
    )
    .option("--dry-run", "list the groups that would be (re)generated; no generator call, no write", false)
    .action(async (options: { tenant?: string; minImportance?: number; dryRun: boolean }) => {
      await runJob("dream", (m) =>
        m.dream({
          tenantId: options.tenant ?? null,
          minImportance: options.minImportance ?? configOrExit().maintenance.dreamMinImportance,
          dryRun: options.dryRun,
        }),
      );
    });

  program
    .command("prune")
    .description("delete old low-importance reflections that have not recurred and nobody marked helpful")
    .option("--tenant <tenantId>", "only this tenant (default: every tenant)")
    .option(
      "--older-than-days <n>",
      "first seen more than N days ago and not seen since (default: PRUNE_OLDER_THAN_DAYS)",
      number(1, 36_500, true),
    )
    .option(
      "--max-importance <x>",
      "importance at or below this (default: PRUNE_MAX_IMPORTANCE)",
      number(0, 1),
    )
    .option("--dry-run", "count what would be deleted; delete nothing", false)
    .action(
      async (options: {
        tenant?: string;
        olderThanDays?: number;
        maxImportance?: number;
        dryRun: boolean;
      }) => {
        const defaults = configOrExit().maintenance;
        await runJob("prune", (m) =>
          m.prune({
            tenantId: options.tenant ?? null,
            olderThanDays: options.olderThanDays ?? defaults.pruneOlderThanDays,
            maxImportance: options.maxImportance ?? defaults.pruneMaxImportance,
            dryRun: options.dryRun,
          }),
        );
      },
    );
}
