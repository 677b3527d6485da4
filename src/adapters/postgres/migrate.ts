import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { runner } from "node-pg-migrate";
import { pgClientConfig } from "./pg-connection.js";
import { sqlMigrationLoader } from "./sql-migrations.js";

export const migrationsDir = fileURLToPath(new URL("../../../migrations", import.meta.url));

/** Creates the database named in the URL when it does not exist yet (local set-ups start empty). */
export async function ensureDatabase(databaseUrl: string, sslCaFile?: string): Promise<boolean> {
  const name = pgClientConfig({ databaseUrl, sslCaFile }).database;
  if (!name) return false;
  const client = new pg.Client(pgClientConfig({ databaseUrl, sslCaFile }, { database: "postgres" }));
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount) return false;
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
    return true;
  } catch (err) {
    // Two processes racing to create it: the loser sees duplicate_database, which is fine.
    if ((err as { code?: string }).code === "42P04") return false;
    throw err;
  } finally {
    await client.end();
  }
}

export interface MigrateOptions {
  databaseUrl: string;
  /** DATABASE_SSL_CA_FILE: the CA that signed Postgres' certificate. */
  sslCaFile?: string | undefined;
  direction?: "up" | "down";
  count?: number;
  log?: (message: string) => void;
}

/** Applies pending migrations with node-pg-migrate (advisory-locked, so pods may race safely). */
export async function migrate(options: MigrateOptions): Promise<string[]> {
  await ensureDatabase(options.databaseUrl, options.sslCaFile);
  const applied = await runner({
    databaseUrl: pgClientConfig({ databaseUrl: options.databaseUrl, sslCaFile: options.sslCaFile }),
    dir: migrationsDir,
    direction: options.direction ?? "up",
    count: options.count ?? Infinity,
    migrationsTable: "pgmigrations",
    log: options.log ?? (() => undefined),
    checkOrder: true,
    // `\ir functions/….sql` in a migration applies a function's one source file.
    migrationLoaderStrategies: [{ extensions: [".sql"], loader: sqlMigrationLoader(migrationsDir) }],
  });
  return applied.map((m) => m.name);
}

/**
 * Migrations in this build's `migrations/` that the database has not applied. A process started
 * against an older schema would fail every commit on a missing column or function, which the
 * consumer cannot tell from a bad event; start-up refuses instead (see app.start).
 */
export async function pendingMigrations(pool: Pick<pg.Pool, "query">): Promise<string[]> {
  const known = (await readdir(migrationsDir))
    .filter((f) => f.endsWith(".sql"))
    .map((f) => f.replace(/\.sql$/, ""))
    .sort();
  const table = await pool.query<{ present: boolean }>(
    "SELECT to_regclass('pgmigrations') IS NOT NULL AS present",
  );
  if (!table.rows[0]?.present) return known;
  const applied = await pool.query<{ name: string }>("SELECT name FROM pgmigrations");
  const done = new Set(applied.rows.map((r) => r.name));
  return known.filter((name) => !done.has(name));
}
