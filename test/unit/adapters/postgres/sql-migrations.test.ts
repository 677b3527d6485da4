import { mkdir, mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { migrationsDir } from "../../../../src/adapters/postgres/migrate.js";
import {
  expandIncludes,
  splitMigration,
  sqlMigrationLoader,
} from "../../../../src/adapters/postgres/sql-migrations.js";

async function scratch(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "sql-migrations-"));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

/** The SQL a loaded migration hands node-pg-migrate for one direction. */
function sqlOf(action: unknown): string {
  const statements: string[] = [];
  (action as (pgm: { sql: (s: string) => void }) => void)({ sql: (s) => statements.push(s) });
  return statements.join("\n");
}

describe("splitMigration", () => {
  it("splits at the markers as node-pg-migrate does, either order, down optional", () => {
    expect(splitMigration("-- Up Migration\nA;\n-- Down Migration\nB;\n")).toEqual({
      up: "-- Up Migration\nA;\n",
      down: "-- Down Migration\nB;\n",
    });
    expect(splitMigration("-- Down Migration\nB;\n-- Up Migration\nA;\n")).toEqual({
      up: "-- Up Migration\nA;\n",
      down: "-- Down Migration\nB;\n",
    });
    expect(splitMigration("A;\n")).toEqual({ up: "A;\n", down: undefined });
  });
});

describe("expandIncludes", () => {
  it("replaces each `\\ir` line by the file's text, leaving comments that mention one", async () => {
    const root = await scratch({ "functions/f.sql": "CREATE OR REPLACE FUNCTION f() $x$ $$ $&;\n" });
    const text = "SELECT 1;\n--   \\ir functions/f.sql\n  \\ir functions/f.sql  \nSELECT 2;\n";
    expect(await expandIncludes(text, join(root, "1_m.sql"), root)).toBe(
      "SELECT 1;\n--   \\ir functions/f.sql\nCREATE OR REPLACE FUNCTION f() $x$ $$ $&;\n\nSELECT 2;\n",
    );
  });

  it("refuses a path outside the migrations folder, a missing file and a nested include", async () => {
    const root = await scratch({
      "functions/nested.sql": "\\ir other.sql\n",
      "functions/other.sql": "SELECT 1;\n",
    });
    const migration = join(root, "1_m.sql");
    await expect(expandIncludes("\\ir ../secret.sql\n", migration, root)).rejects.toThrow(/outside/);
    await expect(expandIncludes("\\ir functions/absent.sql\n", migration, root)).rejects.toThrow(
      /absent\.sql.*ENOENT/,
    );
    await expect(expandIncludes("\\ir functions/nested.sql\n", migration, root)).rejects.toThrow(
      /may not include another/,
    );
  });
});

describe("the project's migrations through the loader", () => {
  it("load with node-pg-migrate's ids; those without includes are unchanged, the commit function comes from its file", async () => {
    const files = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
    const paths = files.map((f) => join(migrationsDir, f));
    const units = await sqlMigrationLoader(migrationsDir)(paths);
    expect(units.map((u) => u.id)).toEqual(paths);
    const source = await readFile(join(migrationsDir, "functions/reflector_commit.sql"), "utf8");
    const read = await Promise.all(
      units.map(async (unit) => ({ unit, raw: splitMigration(await readFile(unit.id, "utf8")) })),
    );
    // 1732000021000 and every later migration that applies the file again (1732000024000).
    const including = read.filter(({ raw }) => /^\\ir/m.test(raw.up));
    const plain = read.filter(({ raw }) => !/^\\ir/m.test(raw.up));
    const idOf = (path: string) => /(\d+)_[^/]*\.sql$/.exec(path)?.[1] ?? "";
    expect(including.map(({ unit }) => idOf(unit.id))).toEqual(
      expect.arrayContaining(["1732000021000", "1732000024000"]),
    );
    for (const { unit } of including) {
      const up = sqlOf(unit.actions.up);
      expect(up).toContain(source);
      expect(up).not.toMatch(/^\\ir/m);
      expect(sqlOf(unit.actions.down)).toContain(`reflector_restore_functions('${idOf(unit.id)}')`);
    }
    expect(plain.length).toBeGreaterThan(0);
    for (const { unit, raw } of plain) expect(sqlOf(unit.actions.up)).toBe(raw.up);
  });
});
