import type pg from "pg";

/**
 * Runs `work` in one transaction on a client of its own: committed when it returns, rolled back
 * when it throws. A client whose rollback failed is released as broken, so the pool drops it.
 * `dryRun`: rolled back when it returns too (the work sees its own writes; nobody else ever does).
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { dryRun?: boolean } = {},
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN");
    try {
      const result = await work(client);
      await client.query(options.dryRun === true ? "ROLLBACK" : "COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}
