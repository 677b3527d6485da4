import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { Partitioners, type Kafka } from "kafkajs";
import pg from "pg";
import { createKafka } from "../src/adapters/kafka/kafka-client.js";
import { ensureTopics } from "../src/adapters/kafka/topics.js";
import { migrate } from "../src/adapters/postgres/migrate.js";
import { topicNames } from "../src/config/config.js";
import { loadConfig, type Config } from "../src/config/config.js";
import type { App } from "../src/composition/app.js";
import type { TaskCompleted } from "../src/domain/contracts/index.js";
import { createLogger } from "../src/observability/logger.js";
import { taskEvent } from "../test/support/task-events.js";

export const brokers = process.env.KAFKA_BROKERS ?? "127.0.0.1:9092";
export const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/reflector_test";
export const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379/0";
export const silentLogger = createLogger("silent");

/** A letters-only word for `i`: signatures mask digits, so distinct failures need distinct letters. */
export function word(i: number): string {
  let n = i;
  let out = "";
  do {
    out = String.fromCharCode(97 + (n % 26)) + out;
    n = Math.floor(n / 26);
  } while (n > 0);
  return out;
}

/** A failing task whose error signature is number `signature`. */
export function benchEvent(tenantId: string, i: number, signature: number): TaskCompleted {
  return taskEvent({
    tenantId,
    eventId: `evt-${tenantId}-${String(i)}`,
    loopId: `loop-${tenantId}-${String(i)}`,
    error: {
      category: "timeout_error",
      type: `query_timeout_${word(signature)}`,
      code: "QUERY_TIMEOUT",
      message: `Query on table ${word(signature)} exceeded its limit`,
      context: {},
    },
  });
}

/** Isolated topics, group and key prefix for one benchmark run, created up front. */
export async function benchSetup(name: string, partitions: number, extraEnv: Record<string, string> = {}) {
  const id = `${name}-${randomUUID().slice(0, 6)}`;
  const env: Record<string, string> = {
    KAFKA_BROKERS: brokers,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `bench-${id}`,
    KAFKA_GROUP_ID: `bench-${id}`,
    KAFKA_CLIENT_ID: `bench-${id}`,
    TOPIC_TASK_COMPLETED: `bench.${id}.in`,
    TOPIC_REFLECTION_ACCEPTED: `bench.${id}.accepted`,
    TOPIC_REFLECTION_REJECTED: `bench.${id}.rejected`,
    TOPIC_LOOP_DECISION: `bench.${id}.decision`,
    TOPIC_DLQ: `bench.${id}.dlq`,
    TOPIC_RETRY: `bench.${id}.retry`,
    TOPIC_PARTITIONS: String(partitions),
    HTTP_PORT: "0",
    HTTP_HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    // The embedder is the default (the local model) unless the bench's environment names one.
    ...(process.env.REFLECTOR_EMBEDDINGS ? { REFLECTOR_EMBEDDINGS: process.env.REFLECTOR_EMBEDDINGS } : {}),
    ...extraEnv,
  };
  const config: Config = loadConfig(env);
  // A database behind the code's schema does not fail loudly in a silent-logged app: its commits
  // are retried as outages forever. Create and migrate it first (advisory-locked, idempotent).
  await migrate({ databaseUrl });
  const kafka: Kafka = createKafka({
    connection: config.kafka,
    clientId: `bench-${id}`,
    logger: silentLogger,
  });
  await ensureTopics(kafka, {
    names: [...topicNames(config), `bench.${id}.pipe`],
    partitions,
    replicationFactor: 1,
  });
  return { id, env, config, kafka, pipeTopic: `bench.${id}.pipe`, tenantId: `bench-${id}` };
}

export type BenchSetup = Awaited<ReturnType<typeof benchSetup>>;

/** Below the broker's default `message.max.bytes` (1 MB), with room for a batch's framing. */
export const brokerBatchBytes = 900_000;

/**
 * Produces the events as plain JSON, keyed by loop id, in batches of at most 500 events and
 * `brokerBatchBytes` (one event alone when it is larger); returns when all are acked.
 */
export async function produceEvents(
  kafka: Kafka,
  topic: string,
  events: TaskCompleted[],
  partition?: number,
) {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  let batch: { key: string; value: string }[] = [];
  let bytes = 0;
  const send = async () => {
    if (batch.length === 0) return;
    await producer.send({
      topic,
      messages: batch.map((m) => ({ ...m, ...(partition === undefined ? {} : { partition }) })),
    });
    batch = [];
    bytes = 0;
  };
  for (const event of events) {
    const value = JSON.stringify(event);
    if (batch.length >= 500 || (batch.length > 0 && bytes + value.length > brokerBatchBytes)) await send();
    batch.push({ key: event.loopId, value });
    bytes += value.length;
  }
  await send();
  await producer.disconnect();
}

/** Counts messages arriving on `topics` (read_committed), with arrival times. */
export async function startCounter(
  kafka: Kafka,
  topics: string[],
  onMessage?: (value: Buffer | null) => void,
) {
  const consumer = kafka.consumer({
    groupId: `bench-counter-${randomUUID().slice(0, 8)}`,
    readUncommitted: false,
  });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  const state = { count: 0, firstAt: 0, lastAt: 0, firstBatch: 0 };
  /** Arrival time of every message, in order (ms, performance.now()). */
  const arrivals: number[] = [];
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const now = performance.now();
      for (const message of batch.messages) {
        onMessage?.(message.value);
        state.count += 1;
        arrivals.push(now);
      }
      if (state.firstAt === 0) {
        state.firstAt = now;
        state.firstBatch = batch.messages.length;
      }
      state.lastAt = now;
      await Promise.resolve();
    },
  });
  return {
    state,
    /** Resolves once `n` messages arrived; rejects after `timeoutMs`. */
    async waitFor(n: number, timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (state.count < n) {
        if (Date.now() > deadline)
          throw new Error(`only ${String(state.count)} of ${String(n)} messages arrived`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    /**
     * Messages per second between the first and the last arrival. The first batch arrived at the
     * window's start, so it is not counted in it: with 16 LLM calls finishing together, counting
     * it would add up to 15 events that took no time (+4 % on 400 events).
     */
    rate(): number {
      const seconds = (state.lastAt - state.firstAt) / 1000;
      return seconds > 0 ? (state.count - state.firstBatch) / seconds : Number.NaN;
    },
    /**
     * Messages per second from the arrival of the `k`-th message to the last one. With `k` = the
     * in-flight limit and a fixed LLM latency, the first wave of completions (which may arrive over
     * several fetches) marks the start of the steady state.
     */
    rateAfter(k: number): number {
      const start = arrivals[Math.max(0, k - 1)] ?? Number.NaN;
      const seconds = (state.lastAt - start) / 1000;
      return seconds > 0 ? (state.count - k) / seconds : Number.NaN;
    },
    stop: () => consumer.disconnect(),
  };
}

/** Deletes the benchmark tenant's rows so repeated runs do not grow the test database. */
export async function cleanTenant(tenantId: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const tables = await pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.columns WHERE column_name = 'tenant_id' AND table_schema = 'public'",
    );
    for (const { table_name } of tables.rows) {
      await pool.query(`DELETE FROM "${table_name}" WHERE tenant_id = $1`, [tenantId]).catch(() => undefined);
    }
  } finally {
    await pool.end();
  }
}

export async function deleteTopics(setup: BenchSetup): Promise<void> {
  const admin = setup.kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`bench.${setup.id}.`));
    await admin.deleteTopics({ topics });
  } catch {
    // best effort
  } finally {
    await admin.disconnect();
  }
}

export function machine(): string {
  const cpu = cpus()[0]?.model ?? "unknown cpu";
  return `${String(cpus().length)} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`;
}

export interface BenchResult {
  name: string;
  /** One line per measured quantity. */
  lines: string[];
  ratio: number;
  goal: string;
  met: boolean;
}

export function report(result: BenchResult): void {
  console.log(`\n## ${result.name}`);
  for (const line of result.lines) console.log(`  ${line}`);
  console.log(`  ratio ${result.ratio.toFixed(3)} — goal ${result.goal} — ${result.met ? "MET" : "NOT MET"}`);
}

/** Runs a benchmark with a deadline: past it, the run fails loudly instead of hanging. */
export async function withDeadline<T>(name: string, deadlineMs: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`benchmark ${name} did not finish within ${String(deadlineMs / 1000)} s`));
    }, deadlineMs);
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Mean and 99th percentile (a histogram bucket's upper bound) per label value of one of the app's
 * histograms, with how many observations each has: "index 1.1 ms ×1500 (p99 ≤ 5 ms), …".
 */
export async function histogramMeans(app: App, metricName: string, label: string): Promise<string> {
  const metric = await app.metrics.registry.getSingleMetric(metricName)?.get();
  const groups = new Map<string, { sum: number; count: number; buckets: [number, number][] }>();
  for (const v of metric?.values ?? []) {
    const key = String(v.labels[label]);
    const entry = groups.get(key) ?? { sum: 0, count: 0, buckets: [] };
    const name = (v as { metricName?: string }).metricName ?? "";
    if (name.endsWith("_sum")) entry.sum = v.value;
    if (name.endsWith("_count")) entry.count = v.value;
    if (name.endsWith("_bucket")) entry.buckets.push([Number(v.labels.le), v.value]);
    groups.set(key, entry);
  }
  return [...groups]
    .filter(([, v]) => v.count > 0)
    .map(([key, v]) => {
      const p99 = v.buckets.sort((x, y) => x[0] - y[0]).find(([, n]) => n >= 0.99 * v.count)?.[0];
      const bound = p99 === undefined || !Number.isFinite(p99) ? "" : ` (p99 ≤ ${String(1000 * p99)} ms)`;
      return `${key} ${((1000 * v.sum) / v.count).toFixed(1)} ms ×${String(v.count)}${bound}`;
    })
    .join(", ");
}

/** Mean and p99 bound per pipeline stage, from the app's own stage histogram. */
export const stageMeans = (app: App): Promise<string> =>
  histogramMeans(app, "reflector_stage_duration_seconds", "stage");

/**
 * Mean and p99 bound per phase of an input record (fetch, queue, run, ordered, commit): where an
 * event's end-to-end time goes.
 */
export const phaseMeans = (app: App): Promise<string> =>
  histogramMeans(app, "reflector_event_phase_seconds", "phase");

/** CPU seconds that the processes `pids` have spent so far (those still running); null off Linux. */
export function processCpuSeconds(pids: number[]): number | null {
  if (!existsSync("/proc/self/stat")) return null;
  let total = 0;
  for (const pid of pids) total += statCpu(String(pid))?.seconds ?? 0;
  return total;
}

/** Command name and CPU seconds (user + system) of one process from /proc; null when it is gone. */
function statCpu(pid: string): { comm: string; seconds: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // "pid (comm) state …": comm may hold spaces, so split after its closing parenthesis.
  const close = stat.lastIndexOf(")");
  const comm = stat.slice(stat.indexOf("(") + 1, close);
  const fields = stat.slice(close + 2).split(" ");
  return { comm, seconds: (Number(fields[11]) + Number(fields[12])) / 100 }; // USER_HZ
}

/** Cumulative CPU seconds per command name (java, postgres, redis-server, …) from /proc; Linux only. */
function cpuByCommand(): Map<string, number> | null {
  const totals = new Map<string, number>();
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of pids) {
    const stat = statCpu(pid);
    if (!stat) continue; // gone meanwhile
    const name = Number(pid) === process.pid ? "this process" : stat.comm;
    totals.set(name, (totals.get(name) ?? 0) + stat.seconds);
  }
  return totals;
}

/** Busy and total CPU seconds of the whole machine, from /proc/stat. */
function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const total = values.reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    return { busy: (total - idle) / 100, total: total / 100 };
  } catch {
    return null;
  }
}

/**
 * The CPU that the machine's processes spent between `start` and `stop`, per event: this process
 * (the app and the bench's counter), the broker (java), Postgres and Redis, and the rest of the
 * machine. Processes that ended meanwhile are not counted. "n/a" off Linux.
 */
export function sampleMachineCpu() {
  const before = cpuByCommand();
  const machineBefore = machineCpuSeconds();
  const startedAt = performance.now();
  return {
    stop(events: number): string {
      const after = cpuByCommand();
      const machineAfter = machineCpuSeconds();
      if (!before || !after || !machineBefore || !machineAfter) return "n/a (no /proc)";
      const wallSeconds = (performance.now() - startedAt) / 1000;
      const spent = (name: string) => Math.max(0, (after.get(name) ?? 0) - (before.get(name) ?? 0));
      const named = ["this process", "java", "postgres", "redis-server"];
      const busy = machineAfter.busy - machineBefore.busy;
      const parts = named.map((name) => [name, spent(name)] as const);
      const rest = Math.max(0, busy - parts.reduce((sum, [, s]) => sum + s, 0));
      const perEvent = (seconds: number) => ((seconds * 1000) / events).toFixed(2);
      const cores = (machineAfter.total - machineBefore.total) / wallSeconds;
      return (
        `${((busy / wallSeconds) * 100).toFixed(0)}% of ${cores.toFixed(0)} cores busy; ms of CPU per event: ` +
        [...parts, ["rest of the machine", rest] as const]
          .map(([name, seconds]) => `${name === "java" ? "kafka (java)" : name} ${perEvent(seconds)}`)
          .join(", ")
      );
    },
  };
}
