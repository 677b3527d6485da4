import type { Kafka } from "kafkajs";
import { loadavg } from "node:os";
import { createApp } from "../src/composition/app.js";
import {
  benchEvent,
  benchSetup,
  cleanTenant,
  deleteTopics,
  report,
  silentLogger,
  phaseMeans,
  stageMeans,
  startCounter,
  type BenchResult,
} from "./support.js";

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** The worst latency of the events sent in each second of the run: where a tail comes from. */
function worstBySecond(trace: readonly [sentAt: number, latency: number][]): string {
  const start = Math.min(...trace.map(([sent]) => sent));
  const worst: number[] = [];
  for (const [sent, latency] of trace) {
    const second = Math.floor((sent - start) / 1000);
    worst[second] = Math.max(worst[second] ?? 0, latency);
  }
  return worst.map((ms, second) => `${String(second)}s ${ms.toFixed(0)}`).join(", ");
}

const cpuMs = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1000;

/**
 * Sends `total` events at `rate`/s and returns end-to-end latencies (send → output arrival), ms,
 * sorted, with the worst of each second's sends.
 */
async function drive(
  kafka: Kafka,
  inputTopic: string,
  outputTopic: string,
  eventIdOf: (value: Buffer) => string,
  events: { eventId: string; loopId: string; body: string }[],
  rate: number,
): Promise<{ latencies: number[]; bySecond: string }> {
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const trace: [number, number][] = [];
  const counter = await startCounter(kafka, [outputTopic], (value) => {
    if (!value) return;
    const sent = sentAt.get(eventIdOf(value));
    if (sent === undefined) return;
    latencies.push(performance.now() - sent);
    trace.push([sent, performance.now() - sent]);
  });
  const producer = kafka.producer();
  await producer.connect();
  const tickMs = 50;
  const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
  const start = performance.now();
  for (let i = 0, tick = 0; i < events.length; i += perTick, tick += 1) {
    const wait = start + tick * tickMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const slice = events.slice(i, i + perTick);
    const now = performance.now();
    for (const e of slice) sentAt.set(e.eventId, now);
    await producer.send({
      topic: inputTopic,
      messages: slice.map((e) => ({ key: e.loopId, value: e.body })),
    });
  }
  await counter.waitFor(events.length, 120_000);
  await producer.disconnect();
  await counter.stop();
  return { latencies: latencies.sort((a, b) => a - b), bySecond: worstBySecond(trace) };
}

/**
 * p50/p99 end-to-end latency at a fixed moderate rate (heuristic generator, real services),
 * against the bare kafkajs pipe at the same rate on the same input. The first events are a burst
 * of new failures (a signature per 20 events, each first seen in the run's first twentieth), the rest
 * recurrences.
 * `START_WARM_UP_MS` and `CONSUMER_BATCH_ROUND_MS` in the environment are passed to the app
 * (default: the app's own) to compare a cold start with a warmed one, and rounds of batch pumping.
 * The CPU time of this process per event (the app, and the bench's producer and reader, which the
 * pipe has too) and the host's load average are printed beside the latencies: on a shared machine
 * the load says how far the run can be trusted.
 */
export async function benchLatency(
  rate = Number(process.env.BENCH_LATENCY_RATE ?? 100),
  seconds = Number(process.env.BENCH_LATENCY_SECONDS ?? 15),
): Promise<BenchResult> {
  const total = rate * seconds;
  const results: Record<string, number[]> = {};
  const worst: Record<string, string> = {};
  let stages = "";
  let phases = "";
  const cpuPerEvent: Record<string, number> = {};
  const loadAtStart = loadavg()[0] ?? 0;
  for (const mode of ["pipe", "reflector"] as const) {
    const passed = ["START_WARM_UP_MS", "CONSUMER_BATCH_ROUND_MS"].flatMap((name) => {
      const value = process.env[name];
      return value === undefined ? [] : [[name, value] as const];
    });
    const setup = await benchSetup(`lat-${mode}`, 6, Object.fromEntries(passed));
    const { kafka, config, tenantId } = setup;
    const events = Array.from({ length: total }, (_, i) => {
      const event = benchEvent(tenantId, i, i % Math.ceil(total / 20));
      return { eventId: event.eventId, loopId: event.loopId, body: JSON.stringify(event) };
    });
    if (mode === "pipe") {
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const pipe = kafka.consumer({ groupId: `bench-pipe-${setup.id}`, maxWaitTimeInMs: 100 });
      await pipe.connect();
      await pipe.subscribe({ topics: [config.topics.taskCompleted], fromBeginning: true });
      await pipe.run({
        partitionsConsumedConcurrently: 6,
        eachBatch: async ({ batch }) => {
          await producer.sendBatch({
            topicMessages: [
              {
                topic: setup.pipeTopic,
                messages: batch.messages.map((m) => ({ key: m.key, value: m.value })),
              },
            ],
          });
        },
      });
      await new Promise((resolve) => setTimeout(resolve, 3000)); // group join
      const cpu = process.cpuUsage();
      ({ latencies: results[mode], bySecond: worst[mode] } = await drive(
        kafka,
        config.topics.taskCompleted,
        setup.pipeTopic,
        (v) => (JSON.parse(v.toString()) as { eventId: string }).eventId,
        events,
        rate,
      ));
      cpuPerEvent[mode] = cpuMs(process.cpuUsage(cpu)) / total;
      await pipe.disconnect();
      await producer.disconnect();
    } else {
      const app = createApp(config, silentLogger);
      await app.start();
      await new Promise((resolve) => setTimeout(resolve, 3000)); // group join
      const cpu = process.cpuUsage();
      ({ latencies: results[mode], bySecond: worst[mode] } = await drive(
        kafka,
        config.topics.taskCompleted,
        config.topics.loopDecision,
        (v) => (JSON.parse(v.toString()) as { sourceEventId: string }).sourceEventId,
        events,
        rate,
      ));
      cpuPerEvent[mode] = cpuMs(process.cpuUsage(cpu)) / total;
      stages = await stageMeans(app);
      phases = await phaseMeans(app);
      await app.stop();
    }
    await cleanTenant(tenantId);
    await deleteTopics(setup);
  }
  const pipe = results.pipe ?? [];
  const reflector = results.reflector ?? [];
  const line = (name: string, l: number[]) =>
    `${name} p50 ${percentile(l, 50).toFixed(0)} ms, p99 ${percentile(l, 99).toFixed(0)} ms, max ${(l.at(-1) ?? 0).toFixed(0)} ms (${String(l.length)} events)`;
  const ratio = percentile(reflector, 99) / percentile(pipe, 99);
  return {
    name: `end-to-end latency at ${String(rate)} events/s for ${String(seconds)} s (heuristic generator)`,
    lines: [
      line("bare kafkajs pipe", pipe),
      line("reflector        ", reflector),
      `worst latency by second of sending, ms: pipe ${worst.pipe ?? ""}`,
      `                                   reflector ${worst.reflector ?? ""}`,
      `CPU of this process per event: pipe ${(cpuPerEvent.pipe ?? 0).toFixed(2)} ms, reflector ${(cpuPerEvent.reflector ?? 0).toFixed(2)} ms; ` +
        `batch round ${process.env.CONSUMER_BATCH_ROUND_MS ?? "default"}; load average ${loadAtStart.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end`,
      `reflector mean phase times ${phases}`,
      `reflector mean stage times ${stages}`,
    ],
    ratio,
    goal: "p99 ≤ 10 × the pipe's p99",
    met: ratio <= 10,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchLatency());
  process.exit(0);
}
