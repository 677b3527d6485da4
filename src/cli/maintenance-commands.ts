import { InvalidArgumentError, type Command } from "commander";
import {
  buildLlm,
  buildMaintenance,
  buildPostgresPool,
  buildReadStores,
  buildRedis,
  systemClock,
  type Maintenance,
} from "../composition/builders.js";
import { configOrExit } from "./config-or-exit.js";

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
  const pool = buildPostgresPool(config, { max: 4 });
  const redis = buildRedis(config);
  try {
    const llm = buildLlm(config);
    const maintenance = buildMaintenance(config, {
      pool,
      redis,
      generator: llm.generator,
      embedder: llm.embedder,
      clock: systemClock,
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

/**
 * `reflector dream` and `reflector prune` (docs/specification.md#dreaming, #pruning), and
 * `reflector sources`, the failures a lesson stands for.
 */
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
    .command("sources")
    .description("list the failures a stored lesson stands for (written for, reused by, merged into it)")
    .argument("<reflectionId>", "the lesson's id")
    .requiredOption("--tenant <tenantId>", "the lesson's tenant")
    .option("--limit <n>", "at most this many (default 1000)", number(1, 100_000, true))
    .action(async (reflectionId: string, options: { tenant: string; limit?: number }) => {
      const pool = buildPostgresPool(configOrExit(), { max: 1 });
      try {
        const { lessons } = buildReadStores(pool, systemClock);
        const sources = await lessons.sourcesOf(options.tenant, reflectionId, options.limit ?? 1000);
        if (!sources) {
          console.error(`no lesson ${reflectionId} for tenant ${options.tenant}`);
          process.exitCode = 1;
          return;
        }
        console.log(JSON.stringify({ reflectionId, sources }, null, 2));
      } finally {
        await pool.end();
      }
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
