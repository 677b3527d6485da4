import { userInfo } from "node:os";
import { InvalidArgumentError, Option, type Command } from "commander";
import { buildLessonSplits, buildPostgresPool, buildRedis } from "../composition/builders.js";
import {
  maxSplitAuditRows,
  parseSourceIds,
  splitRefusal,
  splitTargets,
  type SplitTarget,
} from "../domain/memory/lesson-split.js";
import { configOrExit } from "./config-or-exit.js";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function lessonId(raw: string): string {
  if (!uuidPattern.test(raw))
    throw new InvalidArgumentError(
      "a lesson id is a UUID (see `reflector sources` or the API's reflections)",
    );
  return raw;
}

function auditLimit(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > maxSplitAuditRows)
    throw new InvalidArgumentError(`a whole number from 1 to ${String(maxSplitAuditRows)}`);
  return n;
}

/** Who splits at the command line, as the audit records it. */
function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return "cli";
  }
}

function sourceList(raw: string): string[] {
  const parsed = parseSourceIds(raw);
  if ("error" in parsed) throw new InvalidArgumentError(parsed.error);
  return parsed.ids;
}

/**
 * `reflector split <lessonId> --sources <eventIds> --tenant <t>`: moves source failures that a
 * merge joined to a lesson of another cause out of it (list them with `reflector sources`), into
 * a lesson of their own or back to unassigned. Prints the split as JSON, with an audit line on
 * stderr; a refused split changes nothing and exits 1 with the reason.
 */
export function registerSplitCommand(program: Command): void {
  program
    .command("split")
    .description("move source failures out of a lesson that merged different causes")
    .argument("<reflectionId>", "the lesson's id", lessonId)
    .requiredOption("--tenant <tenantId>", "the lesson's tenant")
    .requiredOption(
      "--sources <eventIds>",
      "comma-separated event ids of its sources to move out",
      sourceList,
    )
    .addOption(
      new Option("--to <target>", "a lesson of their own, or no lesson")
        .choices([...splitTargets])
        .default("new_lesson"),
    )
    .action(async (reflectionId: string, options: { tenant: string; sources: string[]; to: SplitTarget }) => {
      const config = configOrExit();
      const pool = buildPostgresPool(config, { max: 1 });
      const redis = buildRedis(config);
      try {
        const result = await buildLessonSplits(pool, config, redis).splitSources({
          tenantId: options.tenant,
          lessonId: reflectionId,
          eventIds: options.sources,
          to: options.to,
          actor: cliActor(),
        });
        const refused = splitRefusal(result, reflectionId);
        if (refused !== null) {
          process.stderr.write(`reflector split: ${refused}\n`);
          process.exitCode = 1;
          return;
        }
        process.stderr.write(
          `${JSON.stringify({ audit: "lesson_split", actor: cliActor(), tenant: options.tenant, at: new Date().toISOString(), ...result })}\n`,
        );
        console.log(JSON.stringify(result, null, 2));
      } catch (err) {
        process.stderr.write(`reflector split: ${(err as Error).message}\n`);
        process.exitCode = 1;
      } finally {
        await pool.end();
        redis.disconnect();
      }
    });

  program
    .command("splits")
    .description("list the audit of lesson splits: who split which lesson when, which sources moved where")
    .requiredOption("--tenant <tenantId>", "the lessons' tenant")
    .option("--lesson <reflectionId>", "only the splits of this lesson (split, or split into)", lessonId)
    .option("--limit <n>", "newest first, at most this many", auditLimit, 50)
    .action(async (options: { tenant: string; lesson?: string; limit: number }) => {
      const config = configOrExit();
      const pool = buildPostgresPool(config, { max: 1 });
      try {
        const splits = await buildLessonSplits(pool, config).listSplits(options.tenant, {
          ...(options.lesson ? { lessonId: options.lesson } : {}),
          limit: options.limit,
        });
        console.log(JSON.stringify(splits, null, 2));
      } catch (err) {
        process.stderr.write(`reflector splits: ${(err as Error).message}\n`);
        process.exitCode = 1;
      } finally {
        await pool.end();
      }
    });
}
