import { randomUUID } from "node:crypto";
import { readdir } from "node:fs/promises";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ensureDatabase, migrate, migrationsDir } from "../../src/adapters/postgres/migrate.js";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import { createFakeIndex, createOfflineProcessor } from "../support/fakes.js";
import { taskEvent } from "../support/task-events.js";

// A database of its own: the migration under test is rolled back and applied again.
const name = `reflector_commitfn_${randomUUID().slice(0, 8)}`;
const url = new URL(inject("databaseUrl"));
url.pathname = `/${name}`;
const databaseUrl = url.toString();

afterAll(async () => {
  const admin = new pg.Client({ connectionString: inject("databaseUrl") });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
});

const commitFunctions = `SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition
  FROM pg_proc p WHERE p.proname LIKE 'reflector\\_commit%' ORDER BY 1`;

describe("the commit functions applied from their source file (1732000021000)", () => {
  it("up, down and up: down restores the replaced definitions exactly, and replays publish what was published", async () => {
    await ensureDatabase(databaseUrl);
    const migrations = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
    expect(migrations.at(-1)).toBe("1732000021000_commit-function-source.sql");
    await migrate({ databaseUrl, count: migrations.length - 1 });
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    try {
      const before = (await pool.query(commitFunctions)).rows;
      expect(before.map((r: { signature: string }) => r.signature)).toEqual([
        "reflector_commit(jsonb)",
        "reflector_commit_many(jsonb)",
        "reflector_commit_unchecked(jsonb)",
      ]);

      expect(await migrate({ databaseUrl })).toEqual(["1732000021000_commit-function-source"]);
      const after = (await pool.query(commitFunctions)).rows;
      expect(after.map((r: { signature: string }) => r.signature)).toEqual([
        "reflector_commit(jsonb)",
        "reflector_commit_many(jsonb)",
      ]);

      // Events committed by the new function: the outputs as built, the count beside them.
      // A worker that did not see the lesson another had just stored (it reads no lesson) stores
      // it again: its outputs, built before its commit, say a first occurrence; the commit counts
      // a second, deduplicated.
      const store = createPgReflectionStore(pool);
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
        for (const event of events)
          outputs.push((await store.findProcessed(tenantId, event.eventId))?.outputs);
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
      expect(events.map((e) => byEvent.get(e.eventId))).toEqual(published);

      expect(await migrate({ databaseUrl })).toEqual(["1732000021000_commit-function-source"]);
      expect((await pool.query(commitFunctions)).rows).toEqual(after);
      expect(await replayed()).toEqual(published);
    } finally {
      await pool.end();
    }
  });
});
