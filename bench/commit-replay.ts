import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { cleanTenant, databaseUrl } from "./support.js";

/**
 * The group commit's cost in Postgres alone: the groups that a drain committed
 * (`reflector_commit_many`'s argument, recorded as the app sends them) are committed again in the
 * same order, one transaction a group as in the drain, under a new tenant with new lesson ids, and
 * the backend's CPU is read from /proc (Postgres on the same machine). With `definitions`, each
 * round installs each function source in turn (a file such as migrations/functions/reflector_commit.sql
 * of another commit) and replays under it, alternating; the current source is installed again after.
 */
export function recordCommitGroups(): { stop: () => string[] } {
  const groups: string[] = [];
  type Query = (this: pg.Client, ...args: unknown[]) => unknown;
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as { name?: string; values?: unknown[] } | undefined;
    if (config?.name === "reflector-commit-many" && typeof config.values?.[0] === "string")
      groups.push(config.values[0]);
    return original.apply(this, args);
  };
  return {
    stop: () => {
      proto.query = original;
      return groups;
    },
  };
}

function backendCpuMs(pid: number): number {
  // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 a second).
  const fields =
    readFileSync(`/proc/${String(pid)}/stat`, "utf8")
      .split(") ")[1]
      ?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export async function replayCommitGroups(
  groups: string[],
  rounds: number,
  definitions: string[],
): Promise<string[]> {
  const first = groups[0] ? (JSON.parse(groups[0]) as { tenantId: string }[])[0] : undefined;
  if (!first) return ["commit replay: no groups recorded"];
  const units = groups.reduce((n, g) => n + (JSON.parse(g) as unknown[]).length, 0);
  // Lesson and strategy ids are primary keys: each replay gets its own.
  const ids = new Set<string>();
  for (const g of groups)
    for (const u of JSON.parse(g) as { reflection?: { id?: string }; strategy?: { id?: string } }[]) {
      if (u.reflection?.id) ids.add(u.reflection.id);
      if (u.strategy?.id) ids.add(u.strategy.id);
    }
  const idPattern = ids.size > 0 ? new RegExp([...ids].join("|"), "g") : null;
  const current = readFileSync(
    new URL("../migrations/functions/reflector_commit.sql", import.meta.url),
    "utf8",
  );
  const variants = definitions.length > 0 ? definitions : ["(as installed)"];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const perUnit = new Map<string, number[]>(variants.map((v) => [v, []]));
  const tenants: string[] = [];
  // A variant may also set the outputs' compression (as 1732000024000 does): it is put back after.
  const compression = (
    await client.query<{ c: string }>(
      `SELECT CASE attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz' ELSE 'default' END AS c
         FROM pg_attribute WHERE attrelid = 'processed_events'::regclass AND attname = 'outputs'`,
    )
  ).rows[0]?.c;
  try {
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0;
    for (let round = 0; round < rounds; round += 1) {
      for (const variant of variants) {
        if (definitions.length > 0) await client.query(readFileSync(variant, "utf8"));
        const tenant = `${first.tenantId}-replay-${randomUUID().slice(0, 8)}`;
        tenants.push(tenant);
        const fresh = new Map([...ids].map((id) => [id, randomUUID()]));
        const mapped = groups.map((g) => {
          const renamed = g.split(first.tenantId).join(tenant);
          return idPattern ? renamed.replace(idPattern, (id) => fresh.get(id) ?? id) : renamed;
        });
        let failed = 0;
        const before = backendCpuMs(pid);
        for (const group of mapped) {
          await client.query("BEGIN");
          const res = await client.query<{ failed_state: string | null }>(
            "SELECT failed_state FROM reflector_commit_many($1)",
            [group],
          );
          await client.query("COMMIT");
          failed += res.rows.filter((r) => r.failed_state !== null).length;
        }
        if (failed > 0) throw new Error(`commit replay: ${String(failed)} units failed under ${variant}`);
        perUnit.get(variant)?.push((backendCpuMs(pid) - before) / units);
      }
    }
  } finally {
    if (definitions.length > 0) {
      await client.query(current);
      await client.query(
        `ALTER TABLE processed_events ALTER COLUMN outputs SET COMPRESSION ${compression ?? "default"}`,
      );
    }
    await client.end();
    for (const tenant of tenants) await cleanTenant(tenant);
  }
  return [
    `commit replay       ${String(groups.length)} groups, ${String(units)} units, one transaction a group; Postgres CPU per unit, ${String(rounds)} rounds:`,
    ...variants.map(
      (v) => `  ${v}: ${(perUnit.get(v) ?? []).map((ms) => `${ms.toFixed(3)} ms`).join(" / ")}`,
    ),
  ];
}
