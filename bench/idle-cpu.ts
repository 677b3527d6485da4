import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { stopIdleRequestQueuePolling } from "../src/adapters/kafka/request-queue-idle.js";
import { createApp } from "../src/composition/app.js";
import { benchSetup, deleteTopics, silentLogger, withDeadline, type BenchResult } from "./support.js";

interface QueuePrototype {
  scheduleCheckPendingRequests: () => void;
}
const require = createRequire(import.meta.url);
const queue = (require("kafkajs/src/network/requestQueue/index.js") as { prototype: QueuePrototype })
  .prototype;
const installed = queue.scheduleCheckPendingRequests;

const idleMs = Number(process.env.BENCH_IDLE_MS ?? 10_000);

/** The process's CPU time while the app, started and in its group, has nothing to do. */
async function idleCpu(): Promise<number> {
  const setup = await benchSetup("idle", 6);
  const app = createApp(setup.config, silentLogger);
  await app.start();
  await new Promise((resolve) => setTimeout(resolve, 5_000)); // group join, warm-up
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const used = process.cpuUsage(before);
  await app.stop();
  await deleteTopics(setup);
  return (used.user + used.system) / 1000;
}

/**
 * What the processor costs when no event arrives: its whole process's CPU over `BENCH_IDLE_MS`
 * (10 s) once it has joined its group, with kafkajs' request queues as the installed kafkajs
 * schedules them (a 1 ms timer on every idle broker connection) and as Reflector runs them
 * (`src/adapters/kafka/request-queue-idle.ts`). Default settings otherwise; real Kafka, Postgres
 * and Redis.
 */
export async function benchIdleCpu(): Promise<BenchResult> {
  return withDeadline("idle-cpu", 120_000, async () => {
    const load = loadavg()[0] ?? 0;
    stopIdleRequestQueuePolling();
    const fixed = queue.scheduleCheckPendingRequests;
    queue.scheduleCheckPendingRequests = installed;
    const polling = await idleCpu();
    queue.scheduleCheckPendingRequests = fixed;
    const quiet = await idleCpu();
    return {
      name: `the processor idle for ${String(idleMs / 1000)} s, CPU time`,
      lines: [
        `kafkajs as installed (1 ms polling per idle connection): ${polling.toFixed(0)} ms`,
        `as Reflector runs it: ${quiet.toFixed(0)} ms`,
        `load average ${load.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end`,
      ],
      ratio: quiet / polling,
      goal: "idle CPU at most half of the installed kafkajs'",
      met: quiet <= polling / 2,
    };
  });
}
