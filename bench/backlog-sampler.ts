import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Admin, Kafka } from "kafkajs";

/** A consumer group's backlog on one topic: records between its committed offsets and the ends. */
async function backlog(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [ends, committed] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  const done = new Map(committed[0]?.partitions.map((p) => [p.partition, BigInt(p.offset)]) ?? []);
  let total = 0n;
  for (const end of ends) {
    const at = done.get(end.partition) ?? -1n;
    const from = at < 0n ? BigInt(end.low) : at;
    total += BigInt(end.high) - from;
  }
  return Number(total);
}

export interface Watched {
  name: string;
  groupId: string;
  topic: string;
}

/**
 * Samples, every `everyMs`, where the records wait (each watched group's backlog on its topic:
 * before the OTLP bridge, on the task topic, on the retry topic) and measures the event loop's
 * delay of this process (the benchmark runs the app in it): which of them grows under a load is
 * what bounds the delay of the events behind it.
 */
export async function startBacklogSampler(kafka: Kafka, watched: Watched[], everyMs = 2000) {
  const admin = kafka.admin();
  await admin.connect();
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const samples: { at: number; values: number[] }[] = [];
  const started = Date.now();
  let sampling = false;
  const timer = setInterval(() => {
    if (sampling) return;
    sampling = true;
    void Promise.all(watched.map((w) => backlog(admin, w.groupId, w.topic).catch(() => Number.NaN)))
      .then((values) => samples.push({ at: Date.now() - started, values }))
      .finally(() => (sampling = false));
  }, everyMs);
  return {
    /** Marks now: the backlogs of the last sample before it are reported as "at the mark". */
    mark(): number {
      return Date.now() - started;
    },
    async stop(markAt?: number): Promise<string[]> {
      clearInterval(timer);
      loop.disable();
      await admin.disconnect();
      const atMark = markAt === undefined ? undefined : samples.filter((s) => s.at <= markAt).at(-1);
      const ms = (ns: number) => `${(ns / 1e6).toFixed(0)} ms`;
      return [
        ...watched.map((w, i) => {
          const values = samples.map((s) => s.values[i] ?? Number.NaN).filter(Number.isFinite);
          const series = samples
            .filter((_, k) => k % 5 === 0)
            .map((s) => `${(s.at / 1000).toFixed(0)}s:${String(s.values[i] ?? "?")}`)
            .join(" ");
          return `backlog of ${w.name}: max ${String(Math.max(0, ...values))}${atMark ? `, ${String(atMark.values[i])} when B's last event was sent` : ""}, last ${String(values.at(-1) ?? "?")} (every 10 s: ${series})`;
        }),
        `event loop delay of the process under A's load: p50 ${ms(loop.percentile(50))}, p99 ${ms(loop.percentile(99))}, max ${ms(loop.max)}`,
      ];
    },
  };
}
