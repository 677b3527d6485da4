import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { loadConfig } from "../src/config/config.js";
import type { TaskCompleted } from "../src/domain/contracts/index.js";
import { createMetrics } from "../src/observability/metrics.js";
import { withSpans } from "../src/observability/traced-stage-timer.js";
import { startTracing } from "../src/observability/tracing.js";
import type { StageTimer } from "../src/pipeline/stage-timer.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { benchEvent, silentLogger, withDeadline, type BenchResult } from "./support.js";

/**
 * What tracing costs the processor. Tracing off, the processor runs the plain stage timer (the
 * histogram) and no SDK is loaded; on, every stage is also a span, batched to an exporter that
 * here drops them (the network is not what is measured). Two measures, each tracing off and on:
 *   1. Reflector's processor on in-memory ports (heuristic generator, hashing embedder, no I/O):
 *      events per second, one core. Real events wait on Postgres, Redis and Kafka for most of
 *      their time, so this is the largest share tracing can take;
 *   2. the stage wrapper alone: ns per `timer.time(...)` around a resolved promise.
 */

const deadlineMs = Number(process.env.BENCH_TRACING_DEADLINE_MS ?? 180_000);
const wrapperCalls = Number(process.env.BENCH_TRACING_CALLS ?? 200_000);
const events = Number(process.env.BENCH_TRACING_EVENTS ?? 3_000);

/** Counts the spans it is given and keeps none. */
function discardingExporter() {
  let spans = 0;
  const exporter: SpanExporter = {
    export(batch: ReadableSpan[], done: (result: ExportResult) => void) {
      spans += batch.length;
      done({ code: ExportResultCode.SUCCESS });
    },
    shutdown: () => Promise.resolve(),
  };
  return { exporter, exported: () => spans };
}

async function nsPerCall(timer: StageTimer): Promise<number> {
  const work = () => Promise.resolve(1);
  const describe = { attributes: { "reflector.signature": "0123456789abcdef" } };
  for (let i = 0; i < 10_000; i += 1) await timer.time("persist", work, describe);
  const started = process.hrtime.bigint();
  for (let i = 0; i < wrapperCalls; i += 1) await timer.time("persist", work, describe);
  return Number(process.hrtime.bigint() - started) / wrapperCalls;
}

async function eventsPerSecond(timer: StageTimer, stream: TaskCompleted[]): Promise<number> {
  const processor = createOfflineProcessor(
    { store: createFakeStore().store, index: createFakeIndex().index },
    { timer },
  );
  for (const event of stream.slice(0, 200))
    await processor.process({ ...event, eventId: `warm-${event.eventId}` });
  const started = performance.now();
  for (const event of stream) await processor.process(event);
  return stream.length / ((performance.now() - started) / 1000);
}

async function measure(): Promise<BenchResult> {
  const stream = Array.from({ length: events }, (_, i) => benchEvent("bench-tracing", i, i % 50));
  const plain = createMetrics().timer;
  const { exporter, exported } = discardingExporter();
  const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing;
  const tracing = await startTracing(config, silentLogger, { exporter });
  const traced = withSpans(createMetrics().timer, tracing.tracer);
  // The machine is shared: off and on alternate, three rounds, and each keeps its best.
  let offEvents = 0;
  let onEvents = 0;
  for (let round = 0; round < 3; round += 1) {
    offEvents = Math.max(offEvents, await eventsPerSecond(plain, stream));
    onEvents = Math.max(onEvents, await eventsPerSecond(traced, stream));
  }
  const processorSpans = exported();
  const offWrapper = await nsPerCall(plain);
  const onWrapper = await nsPerCall(traced);
  await tracing.shutdown(10_000);

  const ratio = onEvents / offEvents;
  return {
    name: `tracing (stage wrapper × ${String(wrapperCalls)}, processor on in-memory ports × ${String(events)} events)`,
    lines: [
      `stage wrapper, tracing off (histogram only): ${offWrapper.toFixed(0)} ns/call`,
      `stage wrapper, tracing on (histogram + span, batched): ${onWrapper.toFixed(0)} ns/call`,
      `processor, tracing off: ${offEvents.toFixed(0)} events/s`,
      `processor, tracing on: ${onEvents.toFixed(0)} events/s (${(processorSpans / (3 * (events + 200))).toFixed(1)} spans per event)`,
    ],
    ratio,
    goal: "events/s with tracing on ÷ off ≥ 0.7 (in-memory ports: the worst case)",
    met: ratio >= 0.7,
  };
}

export function benchTracing(): Promise<BenchResult> {
  return withDeadline("tracing", deadlineMs, measure);
}
