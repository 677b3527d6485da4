import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it, inject } from "vitest";
import { ensureDatabase, migrate, pendingMigrations } from "../../src/adapters/postgres/migrate.js";
import { createApp } from "../../src/composition/app.js";
import { loadConfig } from "../../src/config/config.js";
import { createLogger } from "../../src/observability/logger.js";

// A database of its own, created empty: the shared test database is already migrated.
const name = `reflector_schema_${randomUUID().slice(0, 8)}`;
const url = new URL(inject("databaseUrl"));
url.pathname = `/${name}`;
const databaseUrl = url.toString();

afterAll(async () => {
  const admin = new pg.Client({ connectionString: inject("databaseUrl") });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
});

describe("start-up against a database behind the build's schema", () => {
  it("refuses to start, naming the missing migrations; once migrated nothing is pending, one unapplied is named", async () => {
    await ensureDatabase(databaseUrl);
    const id = randomUUID().slice(0, 8);
    const config = loadConfig({
      KAFKA_BROKERS: inject("kafkaBrokers"),
      DATABASE_URL: databaseUrl,
      REDIS_URL: inject("redisUrl"),
      REDIS_KEY_PREFIX: `test-${id}`,
      KAFKA_GROUP_ID: `reflector-${id}`,
      HTTP_PORT: "0",
      HTTP_HOST: "127.0.0.1",
    });
    const app = createApp(config, createLogger("silent"));
    try {
      const refused = await app.start().then(
        () => null,
        (err: unknown) => err as { code?: string; message: string },
      );
      expect(refused?.code).toBe("SCHEMA_BEHIND");
      expect(refused?.message).toMatch(/1732000000000_initial-schema/);
      expect(refused?.message).toMatch(/reflector migrate/);
    } finally {
      await app.stop();
    }

    await migrate({ databaseUrl });
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    try {
      expect(await pendingMigrations(pool)).toEqual([]);
      // One migration unapplied is enough to refuse.
      const last = await pool.query<{ name: string }>(
        "SELECT name FROM pgmigrations ORDER BY run_on DESC, id DESC LIMIT 1",
      );
      const lastName = last.rows[0]?.name ?? "";
      await pool.query("DELETE FROM pgmigrations WHERE name = $1", [lastName]);
      expect(await pendingMigrations(pool)).toEqual([lastName]);
    } finally {
      await pool.end();
    }
  });
});
