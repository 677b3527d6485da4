import { loadavg } from "node:os";
import { Partitioners } from "kafkajs";
import pg from "pg";
import { createOtlpBridgeApp } from "../src/composition/otlp-bridge-app.js";
import { ensureTopics } from "../src/adapters/kafka/topics.js";
import { loadConfig } from "../src/config/config.js";
import { runMultiAgentTask, sdkTracer, serialize, type OtlpEncoding } from "../test/support/otel-traces.js";
import {
  benchSetup,
  databaseUrl,
  deleteTopics,
  silentLogger,
  startCounter,
  withDeadline,
  type BenchResult,
  type BenchSetup,
} from "./support.js";

/**
 * Spans per second through the OTLP bridge (issue 16's goal: 10,000). A backlog of OTLP records
 * made by the OpenTelemetry JS SDK (the multi-agent run of the tests: 5 spans per trace), written by
 * its own serializers as a Collector batches them (`spansPerRecord` spans per record), is drained
 * by `createOtlpBridgeApp` — decode, store in Postgres, commit offsets, close each trace, map,
 * publish its event — for each encoding. The rate is taken between the first and the last task
 * event on the input topic, so the group join is not counted; grace 0, so a trace is published as
 * soon as a sweep sees its root. Beside the rate it prints the spans per CPU-second the bridge's
 * process used (user + system, the counting consumer included): what one core does when the
 * machine is shared, which the wall-clock rate does not show.
 */
export async function benchOtlpBridge(
  traces = Number(process.env.BENCH_OTLP_TRACES ?? 6000),
  spansPerRecord = Number(process.env.BENCH_OTLP_SPANS_PER_RECORD ?? 350),
): Promise<BenchResult> {
  const setup = await benchSetup("otlp", 6);
  const traceIds: string[] = [];
  try {
    return await withDeadline("otlp-bridge", 600_000, async () => {
      const lines: string[] = [];
      const rates: number[] = [];
      for (const encoding of ["protobuf", "json"] as const) {
        const { rate, spans, records, perCpuSecond } = await drain(
          setup,
          encoding,
          traces,
          spansPerRecord,
          traceIds,
        );
        rates.push(rate);
        lines.push(
          `${encoding.padEnd(8)} ${String(spans)} spans (${String(traces)} traces) in ${String(records)} records: ${rate.toFixed(0)} spans/s; ${perCpuSecond.toFixed(0)} spans per CPU-second of the bridge process`,
        );
      }
      const lowest = Math.min(...rates);
      lines.push(
        `load average at the end (1, 5, 15 min): ${loadavg()
          .map((l) => l.toFixed(1))
          .join(", ")}`,
      );
      return {
        name: "OTLP bridge (SDK spans → Postgres → one task event per trace, 6 partitions)",
        lines,
        ratio: lowest / 10_000,
        goal: "≥ 1 (10,000 spans/s in both encodings)",
        met: lowest >= 10_000,
      };
    });
  } finally {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    await pool.query("DELETE FROM otlp_traces WHERE trace_id = ANY($1::text[])", [traceIds]);
    await pool.end();
    await deleteTopics(setup);
  }
}

async function drain(
  setup: BenchSetup,
  encoding: OtlpEncoding,
  traces: number,
  spansPerRecord: number,
  traceIds: string[],
) {
  const topic = `bench.${setup.id}.otlp-${encoding}`;
  // Each encoding publishes to an input topic of its own, so each rate counts only its events.
  const input = `bench.${setup.id}.in-${encoding}`;
  // Right after the set-up created its topics, the broker may not know new ones yet when kafkajs
  // asks for their leaders (UNKNOWN_TOPIC_OR_PARTITION); creating them is idempotent, so try again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await ensureTopics(setup.kafka, { names: [topic, input], partitions: 6, replicationFactor: 1 });
      break;
    } catch (err) {
      if (attempt >= 10) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  const config = loadConfig({
    ...setup.env,
    TOPIC_TASK_COMPLETED: input,
    OTLP_TOPIC: topic,
    OTLP_GROUP_ID: `${setup.id}.otlp-${encoding}`,
    OTLP_TRACE_GRACE_MS: "0",
    OTLP_SWEEP_INTERVAL_MS: "20",
  });

  // The backlog: every trace's spans in order, cut into records of `spansPerRecord` spans.
  const sdk = sdkTracer({ "service.name": "bench-agents", "reflector.tenant_id": `bench-${setup.id}` });
  const startMs = Date.UTC(2026, 10, 24);
  for (let i = 0; i < traces; i += 1) {
    const run = runMultiAgentTask(sdk.tracer, {
      conversationId: `bench-${setup.id}-${encoding}-${String(i)}`,
      startMs: startMs + i * 100,
    });
    traceIds.push(run.traceId);
  }
  const spans = sdk.finished();
  await sdk.shutdown();
  const records: Buffer[] = [];
  for (let i = 0; i < spans.length; i += spansPerRecord)
    records.push(serialize(spans.slice(i, i + spansPerRecord), encoding));
  const producer = setup.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  for (let i = 0; i < records.length; i += 4) {
    await producer.send({
      topic,
      messages: records.slice(i, i + 4).map((value, n) => ({ key: String(i + n), value })),
    });
  }
  await producer.disconnect();

  const counter = await startCounter(setup.kafka, [config.topics.taskCompleted]);
  const app = createOtlpBridgeApp(config, silentLogger);
  const cpuBefore = process.cpuUsage();
  await app.start();
  let cpuSeconds: number;
  try {
    await counter.waitFor(traces, 300_000);
    const cpu = process.cpuUsage(cpuBefore);
    cpuSeconds = (cpu.user + cpu.system) / 1e6;
  } finally {
    await app.stop();
    await counter.stop();
  }
  const spansPerTrace = spans.length / traces;
  return {
    rate: counter.rate() * spansPerTrace,
    spans: spans.length,
    records: records.length,
    perCpuSecond: spans.length / cpuSeconds,
  };
}
