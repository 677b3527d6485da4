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
/** The sum of a metric's samples (all labels) in Prometheus' text format; by label value when `by` names one. */
function metricSum(text: string, name: string, by?: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = new RegExp(`^${name}(?:\\{([^}]*)\\})? ([0-9.e+-]+)$`).exec(line);
    if (!m) continue;
    const label = by ? (new RegExp(`${by}="([^"]*)"`).exec(m[1] ?? "")?.[1] ?? "") : "";
    sums.set(label, (sums.get(label) ?? 0) + Number(m[2]));
  }
  return sums;
}

/** Gauges and counters of the app sampled with the backlogs: what the consumer does while they wait. */
const watchedMetrics = [
  ["in flight", "reflector_in_flight_events"],
  ["partitions paused", "reflector_partition_paused"],
  ["assigned partitions", "reflector_consumer_assigned_partitions"],
  ["transactions", "reflector_transactions_total"],
] as const;

export async function startBacklogSampler(
  kafka: Kafka,
  watched: Watched[],
  metricsText: () => Promise<string>,
  everyMs = 2000,
) {
  const admin = kafka.admin();
  await admin.connect();
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const samples: { at: number; values: number[]; gauges: number[] }[] = [];
  let lastText = "";
  const started = Date.now();
  let sampling = false;
  const timer = setInterval(() => {
    if (sampling) return;
    sampling = true;
    void Promise.all([
      ...watched.map((w) => backlog(admin, w.groupId, w.topic).catch(() => Number.NaN)),
      metricsText().catch(() => ""),
    ])
      .then((got) => {
        const text = String(got.at(-1) ?? "");
        lastText = text;
        const gauges = watchedMetrics.map(([, name]) => metricSum(text, name).get("") ?? Number.NaN);
        samples.push({ at: Date.now() - started, values: got.slice(0, -1).map(Number), gauges });
      })
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
        ...watchedMetrics.map(
          ([label], i) =>
            `${label} (every 10 s): ${samples
              .filter((_, k) => k % 5 === 0)
              .map((s) => `${(s.at / 1000).toFixed(0)}s:${String(s.gauges[i])}`)
              .join(" ")}`,
        ),
        `retries by code at the end: ${[...metricSum(lastText, "reflector_retries_total", "code")]
          .map(([code, n]) => `${code || "?"} ${String(n)}`)
          .join(", ")}`,
        `event loop delay of the process under A's load: p50 ${ms(loop.percentile(50))}, p99 ${ms(loop.percentile(99))}, max ${ms(loop.max)}`,
      ];
    },
  };
}
