import { describe, expect, it } from "vitest";
import type pg from "pg";
import { inTransaction } from "../../../../src/adapters/postgres/in-transaction.js";

/** A pool of one client that records its statements; `failing` statements throw. */
function fakePool(failing: string[] = []) {
  const statements: string[] = [];
  const released: (boolean | undefined)[] = [];
  const client = {
    query: (sql: string) => {
      statements.push(sql);
      return failing.includes(sql)
        ? Promise.reject(new Error(`${sql} failed`))
        : Promise.resolve({ rows: [] });
    },
    release: (broken?: boolean) => {
      released.push(broken);
    },
  };
  const pool = { connect: () => Promise.resolve(client) } as unknown as pg.Pool;
  return { pool, statements, released };
}

describe("inTransaction", () => {
  it("commits what the work did when it returns, and gives its value", async () => {
    const { pool, statements, released } = fakePool();
    const value = await inTransaction(pool, async (client) => {
      await client.query("UPDATE t SET x = 1");
      return 7;
    });
    expect(value).toBe(7);
    expect(statements).toEqual(["BEGIN", "UPDATE t SET x = 1", "COMMIT"]);
    expect(released).toEqual([false]);
  });

  it("rolls back when the work throws, and throws its error", async () => {
    const { pool, statements, released } = fakePool(["UPDATE t SET x = 1"]);
    await expect(inTransaction(pool, (client) => client.query("UPDATE t SET x = 1"))).rejects.toThrow(
      "UPDATE t SET x = 1 failed",
    );
    expect(statements).toEqual(["BEGIN", "UPDATE t SET x = 1", "ROLLBACK"]);
    expect(released).toEqual([false]);
  });

  it("rolls back a dry run that returns, and gives its value", async () => {
    const { pool, statements } = fakePool();
    const value = await inTransaction(pool, () => Promise.resolve("counted"), { dryRun: true });
    expect(value).toBe("counted");
    expect(statements).toEqual(["BEGIN", "ROLLBACK"]);
  });

  it("releases a client whose rollback failed as broken, so the pool drops it", async () => {
    const { pool, released } = fakePool(["UPDATE t SET x = 1", "ROLLBACK"]);
    await expect(inTransaction(pool, (client) => client.query("UPDATE t SET x = 1"))).rejects.toThrow(
      "UPDATE t SET x = 1 failed",
    );
    expect(released).toEqual([true]);
  });
});
