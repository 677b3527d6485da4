import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { RunnerOption } from "node-pg-migrate";

type Loader = Extract<
  NonNullable<RunnerOption["migrationLoaderStrategies"]>[number]["loader"],
  (...args: never[]) => unknown
>;
type MigrationUnit = Awaited<ReturnType<Loader>>[number];

/**
 * psql's include-relative meta-command, alone on its line: `\ir functions/reflector_commit.sql`.
 * A migration names a SQL source file (a function's one definition) instead of restating it.
 */
const includeLine = /^[ \t]*\\ir[ \t]+(\S+)[ \t]*$/gm;

/**
 * The migration's text with every `\ir <path>` line replaced by the named file's text. The path is
 * relative to the migration and must stay inside `root` (the migrations folder); an included file
 * includes nothing itself. A missing file fails the whole run before any migration is applied.
 */
export async function expandIncludes(text: string, migrationPath: string, root: string): Promise<string> {
  const paths = [...text.matchAll(includeLine)].map((m) => m[1] ?? "");
  const contents = new Map<string, string>();
  for (const path of new Set(paths)) {
    const file = resolve(dirname(migrationPath), path);
    const inside = relative(root, file);
    if (inside.startsWith("..") || isAbsolute(inside))
      throw new Error(`${migrationPath}: \\ir ${path} is outside ${root}`);
    const included = await readFile(file, "utf8").catch((err: unknown) => {
      throw new Error(`${migrationPath}: \\ir ${path}: ${(err as Error).message}`, { cause: err });
    });
    if (includeLine.test(included)) throw new Error(`${file}: an included file may not include another`);
    includeLine.lastIndex = 0;
    contents.set(path, included);
  }
  return text.replace(includeLine, (_line, path: string) => contents.get(path) ?? "");
}

const marker = (direction: "up" | "down") => new RegExp(`^\\s*--[\\s-]*${direction}\\s+migration`, "im");

/**
 * The up and down parts of a `.sql` migration, split at `-- Up Migration` and `-- Down Migration`
 * as node-pg-migrate's own SQL loader splits them (no down part: the migration cannot be undone).
 */
export function splitMigration(text: string): { up: string; down: string | undefined } {
  const upAt = text.search(marker("up"));
  const downAt = text.search(marker("down"));
  const up = upAt >= 0 ? text.slice(upAt, downAt < upAt ? undefined : downAt) : text;
  const down = downAt >= 0 ? text.slice(downAt, upAt < downAt ? undefined : upAt) : undefined;
  return { up, down };
}

/**
 * node-pg-migrate's loader for `.sql` migrations, with `\ir` includes expanded: the same ids and
 * the same up/down split as its built-in one, so the migrations already applied stay applied.
 */
export function sqlMigrationLoader(root: string): Loader {
  return async (filePaths: string[]): Promise<MigrationUnit[]> => {
    const units: MigrationUnit[] = [];
    for (const filePath of filePaths) {
      // Split first: an included file's comments cannot move the split.
      const parts = splitMigration(await readFile(filePath, "utf8"));
      const up = await expandIncludes(parts.up, filePath, root);
      const down = parts.down === undefined ? undefined : await expandIncludes(parts.down, filePath, root);
      units.push({
        id: filePath,
        filePaths: [filePath],
        actions: {
          up: (pgm) => {
            pgm.sql(up);
          },
          down:
            down === undefined
              ? false
              : (pgm) => {
                  pgm.sql(down);
                },
        },
      });
    }
    return units;
  };
}
