import type pg from "pg";

/** What `reflector_commit_many` reports for one unit of work. */
export interface UnitResult {
  committed: boolean;
  occurrences: number | null;
  outputs: unknown[] | null;
  /** The SQLSTATE that rolled this unit back alone; null when it went through. */
  sqlstate: string | null;
}

/**
 * Group commit: units of work that arrive while a commit is running are written together by the
 * next one, in one statement and one transaction (one WAL flush for all), as Kafka Streams commits
 * its interval's work at once. At most `maxGroups` groups run at a time (each on its own
 * connection, so Postgres can use more than one core); a group takes at most `maxUnits`. A failing unit is rolled back alone (its own subtransaction) and reported; a failing
 * statement (Postgres away) fails every unit of its group, each of which is retried by its event.
 */
export function createGroupCommit(pool: pg.Pool, options: { maxUnits: number; maxGroups: number }) {
  interface Waiting {
    payload: Record<string, unknown>;
    resolve: (result: UnitResult) => void;
    reject: (err: unknown) => void;
  }
  const queue: Waiting[] = [];
  let running = 0;

  async function run(group: Waiting[]): Promise<void> {
    try {
      const res = await pool.query<UnitResult & { i: number }>({
        name: "reflector-commit-many",
        text: "SELECT i, committed, occurrences, outputs, failed_state AS sqlstate FROM reflector_commit_many($1)",
        values: [JSON.stringify(group.map((w) => w.payload))],
      });
      const byIndex = new Map(res.rows.map((row) => [row.i, row]));
      group.forEach((waiting, i) => {
        const row = byIndex.get(i);
        if (row) waiting.resolve(row);
        else waiting.reject(new Error(`reflector_commit_many returned no row for unit ${String(i)}`));
      });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      // One unit's data can fail the whole statement before any unit runs (a NUL byte is refused
      // when the argument is read as jsonb): each unit is then committed on its own, where only
      // the bad one fails. Anything else (Postgres away) is every unit's failure.
      if (group.length > 1 && typeof code === "string" && /^(22|23|54)/.test(code)) {
        for (const waiting of group)
          waiting.resolve({ committed: false, occurrences: null, outputs: null, sqlstate: code });
      } else {
        for (const waiting of group) waiting.reject(err);
      }
    }
  }

  async function pump(): Promise<void> {
    if (running >= options.maxGroups) return;
    running += 1;
    try {
      while (queue.length > 0) await run(queue.splice(0, options.maxUnits));
    } finally {
      running -= 1;
    }
  }

  return {
    /** Commits the unit with the next group; resolves with its own result. */
    submit(payload: Record<string, unknown>): Promise<UnitResult> {
      return new Promise((resolve, reject) => {
        queue.push({ payload, resolve, reject });
        // Units that arrive in the same turn of the event loop join this group.
        if (running < options.maxGroups) setImmediate(() => void pump());
      });
    },
  };
}
