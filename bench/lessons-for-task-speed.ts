/**
 * The speed half of `bench/lessons-for-task.ts`: 10,000 lessons for one tenant in a Postgres
 * database of the benchmark's own (`reflector_bench_lessons`), answered through the Postgres store
 * and the in-process index exactly as the API answers (embedding of the task, ranking, prompts),
 * and how late a change in Postgres is served. Each lesson's task is stored where the pipeline
 * keeps it (the loop trace of its event), so answers weigh shared words as they do in service.
 *
 * `npx tsx bench/lessons-for-task-speed.ts` runs this half alone.
 */
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import pg from "pg";
import { buildLlm } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import { migrate } from "../src/adapters/postgres/migrate.js";
import { pgClientConfig } from "../src/adapters/postgres/pg-connection.js";
import { createPgLessonStore } from "../src/adapters/postgres/pg-lesson-store.js";
import { createLessonIndex } from "../src/features/lessons/lessons-for-task-index.js";
import { createLessonsForTask } from "../src/features/lessons/lessons-for-task.js";
import type { Embedder } from "../src/pipeline/ports.js";
import { databaseUrl, withDeadline, word, type BenchResult } from "./support.js";

const now = new Date("2026-11-26T12:00:00Z");

const latencyLessons = 10_000;
const latencyRequests = 600;

const verbs = [
  "cancel",
  "book",
  "change",
  "refund",
  "upgrade",
  "query",
  "deploy",
  "summarise",
  "translate",
  "schedule",
  "migrate",
  "invoice",
  "search",
  "validate",
  "merge",
  "export",
];
const objects = [
  "reservation",
  "flight",
  "database table",
  "invoice",
  "pull request",
  "customer ticket",
  "report",
  "calendar event",
  "payment",
  "shipment",
  "container image",
  "spreadsheet",
  "user account",
  "web page",
  "contract",
  "dataset",
];
const details = [
  "before checking the policy",
  "with the wrong currency",
  "after the tool timed out",
  "without asking the user",
  "for several passengers",
  "on the wrong date",
  "with stale prices",
  "twice in a row",
  "with a missing field",
  "in the wrong order",
];

/** A varied stored lesson text and its trace text, by number (every word from small lists). */
function syntheticLesson(i: number): { trace: string; lesson: string } {
  const pick = <T>(xs: T[], k: number): T => xs[k % xs.length] as T;
  const v = pick(verbs, i);
  const o = pick(objects, Math.floor(i / verbs.length));
  const d = pick(details, Math.floor(i / (verbs.length * objects.length)));
  return {
    trace: `Help the user ${v} the ${o}. The agent tried to ${v} the ${o} ${d}; case ${word(i)}.`,
    lesson: `Before you ${v} a ${o}, check every input; the attempt failed ${d}. Verify the result.`,
  };
}

async function seedLessons(pool: pg.Pool, tenantId: string, model: string, embedder: Embedder) {
  const batch = 500;
  for (let start = 0; start < latencyLessons; start += batch) {
    const items = Array.from({ length: Math.min(batch, latencyLessons - start) }, (_, k) =>
      syntheticLesson(start + k),
    );
    const vectors = await embedder.embed(items.flatMap((x) => [x.lesson, x.trace]));
    const rows = items.map((item, k) => {
      const i = start + k;
      const at = new Date(now.getTime() - (i % 365) * 86_400_000).toISOString();
      return {
        id: randomUUID(),
        tenant_id: tenantId,
        project_id: `project-${String(i % 5)}`,
        signature: `bench-${word(i)}`,
        signature_type: "bench",
        reflection_text: item.lesson,
        strategy_text: item.lesson,
        learning: item.lesson,
        importance: 0.4 + (i % 7) / 10,
        confidence: 0.8,
        quality_score: 0.45 + (i % 11) / 20,
        verdict: "accepted",
        metrics: {},
        tags: ["bench"],
        adjustments: [`check ${word(i)}`],
        generator: "heuristic",
        attempts: 1,
        embedding: vectors[2 * k],
        source_vector: vectors[2 * k + 1],
        embedding_model: model,
        source_event_id: `evt-${String(i)}`,
        outcome: "failure",
        first_seen_at: at,
        last_seen_at: at,
      };
    });
    await pool.query(
      `INSERT INTO reflections (id, tenant_id, project_id, signature, signature_type, reflection_text, strategy_text,
         learning, importance, confidence, quality_score, verdict, metrics, tags, adjustments, generator, attempts,
         embedding, source_vector, embedding_model, source_event_id, outcome, first_seen_at, last_seen_at)
       SELECT id, tenant_id, project_id, signature, signature_type, reflection_text, strategy_text, learning,
         importance, confidence, quality_score, verdict, metrics, tags, adjustments, generator, attempts, embedding,
         source_vector, embedding_model, source_event_id, outcome, first_seen_at, last_seen_at
         FROM jsonb_populate_recordset(NULL::reflections, $1::jsonb)`,
      [JSON.stringify(rows)],
    );
    // The task each lesson was written for, where the index reads it (the event's loop trace),
    // so that answers weigh the shared words as they do for lessons the pipeline stored.
    const tasks = items.map((item, k) => ({ i: start + k, task: item.trace.split(". ")[0] ?? item.trace }));
    await pool.query(
      `INSERT INTO processed_events (tenant_id, event_id, loop_id, outputs, processed_at)
       SELECT $1, 'evt-' || x.i, 'loop-' || x.i, '[]'::jsonb, now() FROM jsonb_to_recordset($2::jsonb) AS x(i int)`,
      [tenantId, JSON.stringify(tasks)],
    );
    await pool.query(
      `INSERT INTO loop_traces (tenant_id, loop_id, root_loop_id, max_reruns, outcome, decision, rerun_reason,
         rerun_reason_detail, task_text, source_event_id, decided_at)
       SELECT $1, 'loop-' || x.i, 'loop-' || x.i, 3, 'failure', 'finalize', 'bench', 'bench',
              x.task || E'\\noutcome: failure', 'evt-' || x.i, now()
         FROM jsonb_to_recordset($2::jsonb) AS x(i int, task text)`,
      [tenantId, JSON.stringify(tasks)],
    );
  }
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

/**
 * `latencyRequests` answers through the Postgres store and the index, as the API gives them:
 * `refreshMs` 0 starts a refresh on every request (the most refresh work; the default once a
 * second), and every 20th request one lesson gets feedback first, so refreshes read changed rows.
 * Then how late a change is served: a served lesson is withheld in Postgres and the task asked
 * again every 20 ms until it is gone.
 */
async function staleness(
  pool: pg.Pool,
  service: ReturnType<typeof createLessonsForTask>,
  index: ReturnType<typeof createLessonIndex>,
  tenantId: string,
): Promise<string> {
  const task = syntheticLesson(4242).trace;
  const first = (await service.forTask(tenantId, { task, limit: 5, minImportance: 0 })).lessons[0];
  if (!first) return "staleness not measured: the task got no lesson";
  await index.settled(tenantId);
  await pool.query("UPDATE reflections SET effective_quality = 0.1 WHERE id = $1", [first.reflectionId]);
  const start = performance.now();
  for (;;) {
    const answer = await service.forTask(tenantId, { task, limit: 5, minImportance: 0 });
    if (!answer.lessons.some((l) => l.reflectionId === first.reflectionId))
      return `a lesson withheld in Postgres was no longer served after ${(performance.now() - start).toFixed(0)} ms`;
    if (performance.now() - start > 30_000)
      return "a lesson withheld in Postgres was still served after 30 s";
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function latency(embedder: Embedder): Promise<{ lines: string[]; p99: number } | string> {
  const url = new URL(databaseUrl);
  url.pathname = "/reflector_bench_lessons";
  try {
    await migrate({ databaseUrl: url.toString(), log: () => undefined });
  } catch (err) {
    return `Postgres at ${url.host} not reachable: ${(err as Error).message}`;
  }
  // The client settings of every pool Reflector builds (its fast float-array parser included).
  const pool = new pg.Pool({
    ...pgClientConfig({ databaseUrl: url.toString(), sslCaFile: undefined }),
    max: 2,
  });
  const tenantId = `bench-lessons-${randomUUID().slice(0, 8)}`;
  try {
    const seedStart = performance.now();
    await seedLessons(pool, tenantId, embedder.name, embedder);
    const seedMs = performance.now() - seedStart;
    const lines = [
      `${String(latencyLessons)} lessons stored for one tenant in ${(seedMs / 1000).toFixed(1)} s (embedded and inserted)`,
    ];
    const clock = { now: () => new Date() };
    const source = createPgLessonStore(pool, { clock });
    const ids = (
      await pool.query<{ id: string }>("SELECT id FROM reflections WHERE tenant_id = $1", [tenantId])
    ).rows.map((r) => r.id);
    let worst = 0;
    for (const refreshMs of [0, 1_000]) {
      const index = createLessonIndex({ source, embeddingModel: embedder.name, clock, refreshMs });
      const service = createLessonsForTask({ index, embedder, clock });
      const heapBefore = process.memoryUsage();
      const coldStart = performance.now();
      await service.forTask(tenantId, { task: "warm up", limit: 5, minImportance: 0.5 });
      const coldMs = performance.now() - coldStart;
      const heapAfter = process.memoryUsage();
      const times: number[] = [];
      let served = 0;
      const cpuBefore = process.cpuUsage();
      for (let r = 0; r < latencyRequests; r += 1) {
        if (r % 20 === 0) {
          await pool.query(
            "UPDATE reflections SET effective_quality = $2, helpful_count = helpful_count + 1 WHERE id = $1",
            [ids[r % ids.length], 0.9],
          );
        }
        const task = syntheticLesson(r * 7919 + 13).trace.replace(/case \w+\./, "");
        const t = performance.now();
        const answer = await service.forTask(tenantId, { task, limit: 5, minImportance: 0.5 });
        times.push(performance.now() - t);
        served += answer.lessons.length;
      }
      const cpu = process.cpuUsage(cpuBefore);
      const cpuMs = (cpu.user + cpu.system) / 1000 / latencyRequests;
      const mb = (n: number) => (n / 1048576).toFixed(0);
      lines.push(
        `load average ${loadavg()[0]?.toFixed(1) ?? "?"} on this machine's cores during the run; refresh started ${refreshMs === 0 ? "on every request" : `every ${String(refreshMs)} ms`}: first answer (loads the tenant) ${coldMs.toFixed(0)} ms, heap +${mb(heapAfter.heapUsed + heapAfter.arrayBuffers - heapBefore.heapUsed - heapBefore.arrayBuffers)} MB; then ${String(latencyRequests)} answers p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms (${(served / latencyRequests).toFixed(1)} lessons each; one lesson changed every 20); this process's CPU time ${cpuMs.toFixed(2)} ms per answer (refreshes and the updates' client side included)`,
      );
      worst = Math.max(worst, percentile(times, 99));
      lines.push(`  ${await staleness(pool, service, index, tenantId)}`);
    }
    return { lines, p99: worst };
  } finally {
    for (const table of ["reflections", "loop_traces", "processed_events"])
      await pool.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]).catch(() => undefined);
    await pool.end();
  }
}

/** The speed half alone: p99 with 10,000 lessons against the 50 ms goal. */
export async function benchLessonsForTaskSpeed(): Promise<BenchResult> {
  const name = "Lessons for a task: p99 with 10,000 lessons for one tenant";
  return withDeadline(name, 300_000, async () => {
    const { embedder } = buildLlm(loadConfig({}));
    const l = await latency(embedder);
    const p99 = typeof l === "string" ? Infinity : l.p99;
    return {
      name,
      lines: typeof l === "string" ? [`latency not measured: ${l}`] : l.lines,
      ratio: 50 / p99,
      goal: "p99 ≤ 50 ms at 10k (the worst of the two refresh settings)",
      met: p99 <= 50,
    };
  });
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  const { report } = await import("./support.js");
  const result = await benchLessonsForTaskSpeed();
  report(result);
  if (!Number.isFinite(result.ratio)) process.exitCode = 1;
}
