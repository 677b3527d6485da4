import { InvalidArgumentError, Option, type Command } from "commander";
import { buildLessonSplits, buildPostgresPool, buildRedis } from "../builders.js";
import {
  parseSourceIds,
  splitRefusal,
  splitTargets,
  type SplitTarget,
} from "../domain/memory/lesson-split.js";
import { configOrExit } from "./config-or-exit.js";

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
    .argument("<reflectionId>", "the lesson's id", (raw: string) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw))
        throw new InvalidArgumentError(
          "a lesson id is a UUID (see `reflector sources` or the API's reflections)",
        );
      return raw;
    })
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
        });
        const refused = splitRefusal(result, reflectionId);
        if (refused !== null) {
          process.stderr.write(`reflector split: ${refused}\n`);
          process.exitCode = 1;
          return;
        }
        process.stderr.write(
          `${JSON.stringify({ audit: "lesson_split", actor: "cli", tenant: options.tenant, at: new Date().toISOString(), ...result })}\n`,
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
}
