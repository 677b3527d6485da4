import { randomUUID } from "node:crypto";
import { readdir } from "node:fs/promises";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ensureDatabase, migrate, migrationsDir } from "../../src/adapters/postgres/migrate.js";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import { withOccurrences } from "../../src/pipeline/outcome-message.js";
import { createFakeIndex, createOfflineProcessor } from "../support/fakes.js";

/**
 * The store on a database migrated only up to the migration under test. Every migration applies
 * the functions' one source file as it is today, so the columns today's function writes are added
 * as the later migrations add them (`reflections.metadata`, 1732000026200); adaptive prompting's
 * insights, read from columns later migrations add, are none.
 */
async function storeAt(pool: pg.Pool) {
  await pool.query("ALTER TABLE reflections ADD COLUMN IF NOT EXISTS metadata jsonb NOT NULL DEFAULT '{}'");
  return { ...createPgReflectionStore(pool), commonIssues: () => Promise.resolve([]) };
}
import { taskEvent } from "../support/task-events.js";

// A database of its own: the migration under test is rolled back and applied again.
const names = [
  `reflector_commitfn_${randomUUID().slice(0, 8)}`,
  `reflector_commitfn_${randomUUID().slice(0, 8)}`,
];
const urlOf = (name: string) => {
  const url = new URL(inject("databaseUrl"));
  url.pathname = `/${name}`;
  return url.toString();
};
const databaseUrl = urlOf(names[0] ?? "");

afterAll(async () => {
  const admin = new pg.Client({ connectionString: inject("databaseUrl") });
  await admin.connect();
  for (const name of names)
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
});

const commitFunctions = `SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition
  FROM pg_proc p WHERE p.proname LIKE 'reflector\\_commit%' ORDER BY 1`;

describe("the commit functions applied from their source file (1732000021000)", () => {
  it("up, down and up: down restores the replaced definitions exactly, and replays publish what was published", async () => {
    await ensureDatabase(databaseUrl);
    const migrations = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
    // Up to the migration before it; later migrations are not applied while it is tested.
    const at = migrations.indexOf("1732000021000_commit-function-source.sql");
    expect(at).toBeGreaterThan(0);
    await migrate({ databaseUrl, count: at });
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    try {
      const before = (await pool.query(commitFunctions)).rows;
      expect(before.map((r: { signature: string }) => r.signature)).toEqual([
        "reflector_commit(jsonb)",
        "reflector_commit_many(jsonb)",
        "reflector_commit_unchecked(jsonb)",
      ]);

      expect(await migrate({ databaseUrl, count: 1 })).toEqual(["1732000021000_commit-function-source"]);
      const after = (await pool.query(commitFunctions)).rows;
      expect(after.map((r: { signature: string }) => r.signature)).toEqual([
        "reflector_commit(jsonb)",
        "reflector_commit_many(jsonb)",
      ]);

      // Events committed by the new function: the outputs as built, the count beside them.
      // A worker that did not see the lesson another had just stored (it reads no lesson) stores
      // it again: its outputs, built before its commit, say a first occurrence; the commit counts
      // a second, deduplicated.
      const store = await storeAt(pool);
      const unaware = {
        ...store,
        findBySignature: () => Promise.resolve(null),
        nearbyReflections: () => Promise.resolve([]),
      };
      const worker = (on = store) => createOfflineProcessor({ store: on, index: createFakeIndex().index });
      const tenantId = `t-${randomUUID().slice(0, 8)}`;
      const events = [taskEvent({ tenantId }), taskEvent({ tenantId }), taskEvent({ tenantId })];
      const [first, second, third] = events;
      if (!first || !second || !third) throw new Error("three events");
      const published = [
        (await worker().process(first)).outputs,
        (await worker(unaware).process(second)).outputs,
      ];
      published.push((await worker().process(third)).outputs);
      const counted = await pool.query<{ occurrences: number | null; outputs: unknown }>(
        "SELECT occurrences, outputs FROM processed_events WHERE tenant_id = $1",
        [tenantId],
      );
      expect(counted.rows.map((r) => r.occurrences).sort()).toEqual([1, 2, 3]);
      expect(JSON.stringify(published)).toContain('"deduplicated":true');
      // What is stored is not what was published: only the count beside it makes it so.
      const storedNow = counted.rows.map((r) => JSON.stringify(r.outputs));
      expect(published.some((outputs) => !storedNow.includes(JSON.stringify(outputs)))).toBe(true);
      const replayed = async () => {
        const outputs = [];
        for (const event of events) {
          // What the pipeline publishes on a replay: the stored outputs with the stored count.
          const processed = await store.findProcessed(tenantId, event.eventId);
          outputs.push(processed && withOccurrences(processed.outputs, processed.occurrences));
        }
        return outputs;
      };
      expect(await replayed()).toEqual(published);

      expect(await migrate({ databaseUrl, direction: "down", count: 1 })).toEqual([
        "1732000021000_commit-function-source",
      ]);
      expect((await pool.query(commitFunctions)).rows).toEqual(before);
      // The older function replays the stored outputs as they are: the count went into them.
      const stored = await pool.query<{ event_id: string; outputs: unknown }>(
        "SELECT event_id, outputs FROM processed_events WHERE tenant_id = $1",
        [tenantId],
      );
      const byEvent = new Map(stored.rows.map((r) => [r.event_id, r.outputs]));
      // Except the lost insert race's memory action: the count is in, but the older functions knew
      // no `noop` for a lesson another worker inserted first, and said `add`.
      const asOlder = published.map((outputs, i) =>
        i === 1
          ? (JSON.parse(
              JSON.stringify(outputs).replace('"action":"noop"', '"action":"add"'),
            ) as typeof outputs)
          : outputs,
      );
      expect(JSON.stringify(published[1])).toContain('"action":"noop"');
      expect(events.map((e) => byEvent.get(e.eventId))).toEqual(asOlder);

      expect(await migrate({ databaseUrl, count: 1 })).toEqual(["1732000021000_commit-function-source"]);
      expect((await pool.query(commitFunctions)).rows).toEqual(after);
      // The rows the older function rewrote replay as it stored them.
      expect(await replayed()).toEqual(asOlder);
    } finally {
      await pool.end();
    }
  });
});

describe("the cheaper commit (1732000024000)", () => {
  it("up, down and up: down restores the definitions and the outputs' compression; every count is the same", async () => {
    const databaseUrl = urlOf(names[1] ?? "");
    await ensureDatabase(databaseUrl);
    const migrations = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
    const at = migrations.indexOf("1732000024000_cheaper-commit.sql");
    expect(at).toBeGreaterThan(0);
    await migrate({ databaseUrl, count: at });
    const compression = `SELECT attcompression AS c FROM pg_attribute
      WHERE attrelid = 'processed_events'::regclass AND attname = 'outputs'`;
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    try {
      // A fresh database's 1732000021000 applied the file as it is now: the definitions that the
      // migration replaces are made to differ (as a deployed older version's would), so that down
      // has something to restore.
      await pool.query(`DO $$ DECLARE d text; BEGIN
          SELECT pg_get_functiondef('reflector_commit_many(jsonb)'::regprocedure) INTO d;
          EXECUTE replace(d, 'BEGIN', E'-- as deployed before\\nBEGIN');
        END $$`);
      const before = (await pool.query(commitFunctions)).rows;
      expect(JSON.stringify(before)).toContain("as deployed before");
      expect((await pool.query(compression)).rows).toEqual([{ c: "" }]);
      expect(await migrate({ databaseUrl, count: 1 })).toEqual(["1732000024000_cheaper-commit"]);
      const after = (await pool.query(commitFunctions)).rows;
      expect(after).not.toEqual(before);
      expect((await pool.query(compression)).rows).toEqual([{ c: "l" }]);

      // One lesson counted three times by the new function (the tenant check that moved into its
      // UPDATE: test/contract/reflection-store.contract.ts).
      const store = await storeAt(pool);
      const worker = () => createOfflineProcessor({ store, index: createFakeIndex().index });
      const tenantId = `t-${randomUUID().slice(0, 8)}`;
      for (const event of [taskEvent({ tenantId }), taskEvent({ tenantId }), taskEvent({ tenantId })])
        await worker().process(event);
      const counted = await pool.query<{ occurrences: number | null }>(
        "SELECT occurrences FROM processed_events WHERE tenant_id = $1",
        [tenantId],
      );
      expect(counted.rows.map((r) => r.occurrences).sort()).toEqual([1, 2, 3]);
      const lesson = await pool.query("SELECT occurrences FROM reflections WHERE tenant_id = $1", [tenantId]);
      expect(lesson.rows).toEqual([{ occurrences: 3 }]);

      expect(await migrate({ databaseUrl, direction: "down", count: 1 })).toEqual([
        "1732000024000_cheaper-commit",
      ]);
      expect((await pool.query(commitFunctions)).rows).toEqual(before);
      expect((await pool.query(compression)).rows).toEqual([{ c: "p" }]);
      expect(await migrate({ databaseUrl, count: 1 })).toEqual(["1732000024000_cheaper-commit"]);
      expect((await pool.query(commitFunctions)).rows).toEqual(after);
    } finally {
      await pool.end();
    }
  });
});
