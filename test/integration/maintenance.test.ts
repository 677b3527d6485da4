import { execFile, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { patternSignature } from "../../src/domain/maintenance/dream-groups.js";
import { cliEnv } from "../support/cli-env.js";
import { helpfulModel, startFakeOpenAiServer, traceDataOf } from "../support/fake-openai-server.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * Dreaming and pruning against the real Postgres (and Redis for cache eviction). The stored
 * reflections they work on are made the way production makes them: task events published
 * through Kafka and processed by the pipeline (heuristic generator). Only time is faked, by
 * moving rows' first/last-seen timestamps back, since waiting 90 days is not an option.
 */

let h: Harness;
beforeAll(async () => {
  // The offline generator writes one template per failure kind, so lessons of one kind on one tool
  // are near-duplicates that memory would merge into one; these tests need them as separate
  // sources and candidates, so merging is off here (memory's own tests cover it).
  h = await startHarness({ env: { MEMORY_MERGE_MIN_SIMILARITY: "1" } });
});
afterAll(async () => {
  await h.close();
});

type Failure = "timeout" | "rate_limit" | "auth" | "not_found" | "validation";

/** A failing task of one kind; `category` groups it for dreaming, `importance` sets its weight. */
function failure(
  tenantId: string,
  kind: Failure,
  category: string,
  importance: number,
  n = 0,
  variant = "",
): TaskCompleted {
  const errors: Record<Failure, { type: string; code: string; message: string; tool: string }> = {
    timeout: {
      type: "query_timeout",
      code: "QUERY_TIMEOUT",
      message: "Query execution exceeded 30s limit",
      tool: "postgres_query",
    },
    rate_limit: {
      type: "rate_limited",
      code: "HTTP_429",
      message: "429 Too Many Requests, Retry-After: 20",
      tool: "orders_api",
    },
    auth: {
      type: "unauthorized",
      code: "HTTP_401",
      message: "401 Unauthorized: expired token",
      tool: "billing_api",
    },
    validation: {
      type: "invalid_argument",
      code: "HTTP_400",
      message: "400 Bad Request: start must be an RFC 3339 date-time, got 'next Tuesday 3pm'",
      tool: "calendar_api",
    },
    not_found: {
      type: "missing_order",
      code: "HTTP_404",
      message: `404 Not Found: order ORD-${String(n)}7731 does not exist`,
      tool: "orders_api",
    },
  };
  const e = errors[kind];
  return taskEvent({
    tenantId,
    outcome: "partial",
    task: {
      description: `Fetch order history for account ${String(n)}`,
      goal: "Answer the customer",
      importance,
    },
    // `variant` makes a distinct error signature (otherwise the pipeline dedupes into the first)
    // and a distinct tool: the same lesson about the same tool is not new, and is not stored twice.
    error: { category, type: `${e.type}${variant}`, code: e.code, message: e.message, context: {} },
    events: [
      {
        eventId: "e1",
        type: "tool_call",
        timestamp: "2026-11-20T10:00:00.000Z",
        toolName: `${e.tool}${variant}`,
        content: `call ${e.tool}${variant} for account ${String(n)}`,
        metadata: { timeout_ms: 30000 },
      },
      {
        eventId: "e2",
        type: "error_event",
        timestamp: "2026-11-20T10:00:30.000Z",
        toolName: `${e.tool}${variant}`,
        content: e.message,
        error: { message: e.message, code: e.code },
      },
    ],
  });
}

/** Publishes the events and waits until each one's outputs are out. */
async function processAll(events: TaskCompleted[]): Promise<void> {
  for (const event of events) await h.publish(event);
  for (const event of events) await h.waitForOutputs(event.eventId, 2);
}

async function stored(tenantId: string) {
  const res = await h.pool.query<{
    id: string;
    signature: string;
    kind: string;
    importance: number;
    generator: string;
    verdict: string;
    error_category: string | null;
  }>(
    `SELECT id, signature, kind, importance, generator, verdict, error_category FROM reflections
      WHERE tenant_id = $1 ORDER BY kind, signature`,
    [tenantId],
  );
  return res.rows;
}

function cli(args: string[], env: Record<string, string>) {
  const run = spawnSync(process.execPath, ["--import", "tsx", "test/support/run-cli.ts", ...args], {
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("dreaming (full mode)", () => {
  const tenantId = `dream-${randomUUID().slice(0, 8)}`;

  it("stores one judged pattern lesson per group of high-importance reflections, linked to its sources", async () => {
    await processAll([
      failure(tenantId, "timeout", "orders_api", 0.75, 1),
      failure(tenantId, "rate_limit", "orders_api", 0.75, 2),
      failure(tenantId, "auth", "orders_api", 0.75, 3),
      // Important but alone in its category: no pattern.
      failure(tenantId, "timeout", "reporting", 0.75, 4),
      // In the category but not important enough to dream about.
      failure(tenantId, "not_found", "orders_api", 0.1, 5),
    ]);
    const before = await stored(tenantId);
    const sources = before.filter((r) => r.error_category === "orders_api" && r.importance >= 0.7);
    expect(sources.length, `stored: ${JSON.stringify(before)}`).toBe(3);

    const dry = await h.app.maintenance.dream({ tenantId, minImportance: 0.7, dryRun: true });
    expect(dry).toMatchObject({ tenants: 1, wouldGenerate: 1, inserted: 0 });
    expect(await stored(tenantId)).toEqual(before);

    const report = await h.app.maintenance.dream({ tenantId, minImportance: 0.7, dryRun: false });
    expect(report.groups, JSON.stringify(report.groups)).toHaveLength(1);
    expect(report).toMatchObject({ generator: "heuristic", inserted: 1, updated: 0, notStored: 0 });
    expect(report.groups[0]).toMatchObject({ key: "category:orders_api", sources: 3, status: "inserted" });

    const patterns = (await stored(tenantId)).filter((r) => r.kind === "pattern");
    expect(patterns).toHaveLength(1);
    const pattern = patterns[0];
    expect(pattern).toMatchObject({
      signature: patternSignature("category:orders_api"),
      generator: "heuristic",
      error_category: "orders_api",
    });
    expect(["accepted", "accepted_with_warnings"]).toContain(pattern?.verdict);
    const links = await h.pool.query<{ source_id: string }>(
      "SELECT source_id FROM reflection_sources WHERE pattern_id = $1 ORDER BY source_id",
      [pattern?.id],
    );
    expect(links.rows.map((r) => r.source_id)).toEqual(sources.map((s) => s.id).sort());
    // Judged like any lesson: the quality judgement is recorded, and the strategy stored beside it.
    const judgement = await h.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM reflection_judgements WHERE tenant_id = $1 AND signature = $2 AND stored",
      [tenantId, pattern?.signature],
    );
    expect(judgement.rows[0]?.n).toBe(1);
    const strategy = await h.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM strategies WHERE reflection_id = $1",
      [pattern?.id],
    );
    expect(strategy.rows[0]?.n).toBe(1);
  });

  it("is idempotent: a second run over the same inputs writes nothing; a new source rewrites the pattern", async () => {
    const before = await stored(tenantId);
    const again = await h.app.maintenance.dream({ tenantId, minImportance: 0.7, dryRun: false });
    expect(again).toMatchObject({ inserted: 0, updated: 0, unchanged: 1 });
    expect(await stored(tenantId)).toEqual(before);

    // A new failure of another kind in the group (a repeat of a stored lesson is not a new source).
    await processAll([failure(tenantId, "validation", "orders_api", 0.8, 6, "_archived")]);
    const grown = await h.app.maintenance.dream({ tenantId, minImportance: 0.7, dryRun: false });
    expect(grown, JSON.stringify(grown)).toMatchObject({ inserted: 0, updated: 1, unchanged: 0 });
    const patterns = (await stored(tenantId)).filter((r) => r.kind === "pattern");
    expect(patterns).toHaveLength(1);
    const links = await h.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM reflection_sources WHERE pattern_id = $1",
      [patterns[0]?.id],
    );
    expect(links.rows[0]?.n).toBe(4);
  });

  it("runs on one replica at a time: a held advisory lock makes the run skip", async () => {
    const holder = await h.pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtextextended('reflector:dream', 0))");
      let ran = false;
      const result = await h.app.maintenance.exclusive("dream", () => {
        ran = true;
        return Promise.resolve();
      });
      expect(result.ran).toBe(false);
      expect(ran).toBe(false);
    } finally {
      await holder.query("SELECT pg_advisory_unlock(hashtextextended('reflector:dream', 0))");
      holder.release();
    }
    const free = await h.app.maintenance.exclusive("dream", () => Promise.resolve(42));
    expect(free).toEqual({ ran: true, value: 42 });
  });

  it("`reflector dream --dry-run` reports what it would generate and writes nothing; lite mode refuses to dream", () => {
    const env = cliEnv(h.config);
    const ok = cli(["dream", "--tenant", tenantId, "--dry-run"], env);
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ tenants: 1, unchanged: 1, wouldGenerate: 0 });

    const lite = cli(["dream", "--tenant", tenantId], { ...env, REFLECTOR_MODE: "lite" });
    expect(lite.status).toBe(1);
    expect(lite.stderr).toContain("dreaming runs in full mode only");
  });
});

/** The CLI without blocking this process (the fake model server below runs in it). */
function cliAsync(args: string[], env: Record<string, string>) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "test/support/run-cli.ts", ...args],
      { env, encoding: "utf8", timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("dreaming with the configured model (REFLECTOR_GENERATOR=openai)", () => {
  it("asks the model about the group's lessons as one exploratory task and labels the result openai", async () => {
    const tenantId = `dream-llm-${randomUUID().slice(0, 8)}`;
    await processAll([
      failure(tenantId, "timeout", "search_api", 0.75, 1, "_search"),
      failure(tenantId, "rate_limit", "search_api", 0.75, 2, "_search"),
    ]);
    const sources = await h.pool.query<{ reflection_text: string }>(
      "SELECT reflection_text FROM reflections WHERE tenant_id = $1 ORDER BY id",
      [tenantId],
    );
    expect(sources.rows).toHaveLength(2);
    const fake = await startFakeOpenAiServer({ chat: helpfulModel });
    try {
      const run = await cliAsync(["dream", "--tenant", tenantId], {
        ...cliEnv(h.config),
        REFLECTOR_GENERATOR: "openai",
        OPENAI_BASE_URL: fake.url,
        REFLECTOR_MODEL: "fake-model",
      });
      expect(run.status, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as {
        generator: string;
        groups: { key: string; status: string }[];
      };
      expect(report.generator).toBe("openai");
      expect(report.groups).toHaveLength(1);
      expect(report.groups[0]?.key).toBe("category:search_api");
      expect(["inserted", "not_stored"]).toContain(report.groups[0]?.status);

      // Dreaming with a model: the lessons travel as the trace of one partial task, as data.
      const data = traceDataOf(fake.chatRequests()[0] ?? { model: "", messages: [] });
      expect(data?.task?.description).toBe(
        "Analyzing patterns in 2 high-importance reflections on search_api",
      );
      expect(data?.outcome).toBe("partial");
      const sent = (data?.events ?? []).map((e) => e.content ?? "").join("\n");
      for (const row of sources.rows) expect(sent).toContain(row.reflection_text);

      // Whatever the verdict, the judgement names the generator that wrote it.
      const judged = await h.pool.query<{ generator: string }>(
        "SELECT generator FROM reflection_judgements WHERE tenant_id = $1 AND signature = $2",
        [tenantId, patternSignature("category:search_api")],
      );
      expect(judged.rows.map((r) => r.generator)).toEqual(["openai"]);
      // A stored pattern names it too; one not stored left no row.
      const row = await h.pool.query<{ generator: string; kind: string }>(
        "SELECT generator, kind FROM reflections WHERE tenant_id = $1 AND signature = $2",
        [tenantId, patternSignature("category:search_api")],
      );
      expect(row.rows).toEqual(
        report.groups[0]?.status === "inserted" ? [{ generator: "openai", kind: "pattern" }] : [],
      );
    } finally {
      await fake.close();
    }
  });
});

describe("pruning", () => {
  const tenantId = `prune-${randomUUID().slice(0, 8)}`;
  const kinds: Failure[] = ["timeout", "rate_limit", "auth", "not_found"];

  it("deletes old low-importance reflections but keeps recurring, helpful and important ones", async () => {
    const low = kinds.map((kind, n) => failure(tenantId, kind, "ops", 0.1, n));
    // Important, and a lesson of its own (a repeat of a low one would not be stored again).
    const important = failure(tenantId, "validation", "billing", 0.75, 9, "_billing");
    await processAll([...low, important]);
    const rows = await stored(tenantId);
    expect(rows).toHaveLength(5);
    // Age every row by 200 days, as if the lessons were learnt long ago.
    await h.pool.query(
      `UPDATE reflections SET first_seen_at = first_seen_at - interval '200 days',
              last_seen_at = last_seen_at - interval '200 days' WHERE tenant_id = $1`,
      [tenantId],
    );
    const idOf = async (event: TaskCompleted) => {
      const res = await h.pool.query<{ reflection_id: string }>(
        "SELECT reflection_id FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
        [tenantId, event.eventId],
      );
      return res.rows[0]?.reflection_id ?? "";
    };
    const [timeout, rateLimit, auth, notFound] = low as [
      TaskCompleted,
      TaskCompleted,
      TaskCompleted,
      TaskCompleted,
    ];
    // The timeout recurs today (through Kafka): a lesson still being hit is not pruned.
    await processAll([{ ...timeout, eventId: `${timeout.eventId}-again` }]);
    // Someone marked the rate-limit lesson helpful (the counter feedback maintains).
    await h.pool.query("UPDATE reflections SET helpful_count = 1 WHERE id = $1", [await idOf(rateLimit)]);

    const sigOf = async (event: TaskCompleted) =>
      (
        await h.pool.query<{ signature: string }>("SELECT signature FROM reflections WHERE id = $1", [
          await idOf(event),
        ])
      ).rows[0]?.signature ?? "";
    const authKey = `${h.config.redis.keyPrefix}:sig:${tenantId}:${await sigOf(auth)}`;
    expect(await h.redis.exists(authKey), "the pipeline cached the auth lesson").toBe(1);
    const doomed = [await idOf(auth), await idOf(notFound)].sort();

    const options = { tenantId, olderThanDays: 90, maxImportance: 0.3 };
    const dry = await h.app.maintenance.prune({ ...options, dryRun: true });
    expect(dry).toMatchObject({ candidates: 4, keptRecent: 1, keptHelpful: 1, deleted: 2, dryRun: true });
    expect(await stored(tenantId)).toHaveLength(5);

    const report = await h.app.maintenance.prune({ ...options, dryRun: false });
    expect(report).toMatchObject({ candidates: 4, keptRecent: 1, keptHelpful: 1, deleted: 2, dryRun: false });
    const left = (await stored(tenantId)).map((r) => r.id);
    expect(left).toHaveLength(3);
    for (const id of doomed) expect(left).not.toContain(id);
    expect(left).toContain(await idOf(rateLimit));
    expect(left).toContain(await idOf(important));
    // The cache forgot the deleted lesson, so the pipeline will not reuse it.
    expect(await h.redis.exists(authKey)).toBe(0);

    const again = await h.app.maintenance.prune({ ...options, dryRun: false });
    expect(again).toMatchObject({ deleted: 0 });
  });

  it("`reflector prune --dry-run` reports what it would delete; an importance outside 0–1 is refused with a clear message", () => {
    const env = cliEnv(h.config);
    const ok = cli(
      ["prune", "--tenant", tenantId, "--older-than-days", "30", "--max-importance", "0.3", "--dry-run"],
      env,
    );
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ deleted: 0, dryRun: true, maxImportance: 0.3 });

    const bad = cli(["prune", "--max-importance", "7"], env);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("expected a number from 0 to 1");
  });
});

describe("the processor's schedule", () => {
  it("prunes on its own every PRUNE_INTERVAL_MS", async () => {
    const tenantId = `sched-${randomUUID().slice(0, 8)}`;
    await h.stopApp();
    const scheduled = await startHarness({
      // The schedule prunes every tenant of the shared test database: thresholds only this
      // test's row (aged 4000 days) can meet, so other test files' data is never at risk.
      env: { PRUNE_INTERVAL_MS: "300", PRUNE_OLDER_THAN_DAYS: "3650", PRUNE_MAX_IMPORTANCE: "0.2" },
    });
    try {
      const event = failure(tenantId, "auth", "ops", 0.1, 1);
      await scheduled.publish(event);
      await scheduled.waitForOutputs(event.eventId, 2);
      await scheduled.pool.query(
        `UPDATE reflections SET first_seen_at = now() - interval '4000 days', last_seen_at = now() - interval '4000 days'
          WHERE tenant_id = $1`,
        [tenantId],
      );
      await waitFor(
        async () => {
          const res = await scheduled.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM reflections WHERE tenant_id = $1",
            [tenantId],
          );
          return res.rows[0]?.n === 0;
        },
        { timeoutMs: 20_000, what: "the scheduled prune to delete the aged reflection" },
      );
    } finally {
      await scheduled.close();
      await h.startApp();
    }
  });
});
