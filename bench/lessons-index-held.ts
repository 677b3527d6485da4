/**
 * How many lessons one very large tenant keeps in the lessons-for-task index under the default
 * byte budget (`LESSONS_INDEX_MAX_BYTES`, one tenant at most half of it), and what its load costs:
 * `BENCH_HELD_LESSONS` lessons (default 1,000,000) from an in-memory source read a page at a time
 * as Postgres is (no database: the rows are made on the fly from 256 lesson texts and vectors of
 * 384 dimensions), then the index's estimate, the heap after a collection, RSS, and the load's
 * wall time and CPU. Default settings.
 *
 * `node_modules/.bin/node --expose-gc --import tsx bench/lessons-index-held.ts`
 */
import { loadavg } from "node:os";
import {
  createLessonIndex,
  type LessonVectorRow,
  type LessonVectorSource,
} from "../src/features/lessons/lessons-for-task-index.js";
import { withDeadline } from "./support.js";

const lessons = Number(process.env.BENCH_HELD_LESSONS ?? 1_000_000);
const dims = 384;
const texts = 256;
const vectors = Array.from({ length: texts }, (_, t) =>
  Array.from({ length: dims }, (_, k) => Math.sin(t * 31 + k)),
);
const at = new Date("2026-12-01T00:00:00Z");
const idOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

function rowOf(i: number): LessonVectorRow {
  const text = `Check the order status of request kind ${String(i % texts)} before acting on it`;
  return {
    id: idOf(i),
    projectId: "p",
    strategyText: text,
    learning: text,
    adjustments: ["verify the current state first"],
    tags: ["orders"],
    importance: 0.5 + (i % 100) / 1000,
    effectiveQuality: 0.8,
    createdAt: at,
    lastSeenAt: at,
    updatedAt: at,
    vector: vectors[i % texts] ?? [],
    task: `handle request kind ${String(i % texts)} for the customer`,
  };
}

const source: LessonVectorSource = {
  lessonVersion: () => Promise.resolve({ count: lessons, latest: at }),
  lessonVectors: (_tenant, _model, _since, page) => {
    const start = page?.afterId ? Number(page.afterId.slice(-12)) + 1 : 0;
    const end = Math.min(lessons, start + (page?.limit ?? lessons));
    return Promise.resolve(Array.from({ length: end - start }, (_, k) => rowOf(start + k)));
  },
};

await withDeadline("lessons-index-held", 600_000, async () => {
  const startedAt = performance.now();
  const cpuBefore = process.cpuUsage();
  const index = createLessonIndex({ source, embeddingModel: "m", clock: { now: () => new Date() } });
  await index.lessonsOf("large");
  const cpu = process.cpuUsage(cpuBefore);
  (globalThis as { gc?: () => void }).gc?.();
  const size = index.size();
  const memory = process.memoryUsage();
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  console.log(
    `lessons ${String(lessons)}: held ${String(size.lessons)}, known and not held ${String(size.notHeld)}`,
  );
  console.log(
    `  index estimate ${mib(size.bytes)} MiB; heap after a collection ${mib(memory.heapUsed)} MiB, its buffers ${mib(memory.arrayBuffers)} MiB, RSS ${mib(memory.rss)} MiB`,
  );
  console.log(
    `  load ${((performance.now() - startedAt) / 1000).toFixed(1)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s; load average ${loadavg()[0]?.toFixed(1) ?? "?"}`,
  );
});
