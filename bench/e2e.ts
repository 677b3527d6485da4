import { createApp } from "../src/app.js";
import {
  benchEvent,
  benchSetup,
  cleanTenant,
  deleteTopics,
  produceEvents,
  report,
  silentLogger,
  startCounter,
  type BenchResult,
} from "./support.js";

/**
 * End-to-end events/s with the heuristic generator through real Kafka, Redis and Postgres,
 * against a bare kafkajs consume→produce pipe (eachBatch + sendBatch) over the same input topic.
 * Both drain the same pre-produced backlog; the rate is measured between first and last output.
 */
export async function benchE2e(events = Number(process.env.BENCH_E2E_EVENTS ?? 5000)): Promise<BenchResult> {
  const setup = await benchSetup("e2e", 6);
  const { kafka, config, tenantId } = setup;
  // 5% new signatures: the rest repeat known failures, as in production.
  const stream = Array.from({ length: events }, (_, i) =>
    benchEvent(tenantId, i, i % Math.ceil(events / 20)),
  );
  await produceEvents(kafka, config.topics.taskCompleted, stream);

  // 1. The bare pipe: consume, copy the value to the pipe topic, commit.
  const pipeCounter = await startCounter(kafka, [setup.pipeTopic]);
  const pipeProducer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await pipeProducer.connect();
  const pipe = kafka.consumer({ groupId: `bench-pipe-${setup.id}` });
  await pipe.connect();
  await pipe.subscribe({ topics: [config.topics.taskCompleted], fromBeginning: true });
  await pipe.run({
    partitionsConsumedConcurrently: 6,
    eachBatch: async ({ batch }) => {
      await pipeProducer.sendBatch({
        topicMessages: [
          {
            topic: setup.pipeTopic,
            messages: batch.messages.map((m) => ({ key: m.key, value: m.value })),
          },
        ],
      });
    },
  });
  await pipeCounter.waitFor(events, 300_000);
  const pipeRate = pipeCounter.rate();
  await pipe.disconnect();
  await pipeProducer.disconnect();
  await pipeCounter.stop();

  // 2. Reflector on the same backlog (its own group), heuristic generator.
  const decisions = await startCounter(kafka, [config.topics.loopDecision]);
  const app = createApp(config, silentLogger);
  await app.start();
  await decisions.waitFor(events, 600_000);
  const reflectorRate = decisions.rate();
  // Where the time goes: mean duration per pipeline stage, from the app's own histogram.
  const stageMetric = await app.metrics.registry.getSingleMetric("reflector_stage_duration_seconds")?.get();
  const sums = new Map<string, { sum: number; count: number }>();
  for (const v of stageMetric?.values ?? []) {
    const stage = String(v.labels.stage);
    const entry = sums.get(stage) ?? { sum: 0, count: 0 };
    if ((v as { metricName?: string }).metricName?.endsWith("_sum")) entry.sum = v.value;
    if ((v as { metricName?: string }).metricName?.endsWith("_count")) entry.count = v.value;
    sums.set(stage, entry);
  }
  const stages = [...sums]
    .filter(([, v]) => v.count > 0)
    .map(([stage, v]) => `${stage} ${((1000 * v.sum) / v.count).toFixed(1)} ms`)
    .join(", ");
  await app.stop();
  await decisions.stop();
  await cleanTenant(tenantId);
  await deleteTopics(setup);

  const ratio = reflectorRate / pipeRate;
  return {
    name: "e2e throughput (heuristic generator, 6 partitions)",
    lines: [
      `events ${String(events)} (${String(Math.ceil(events / 20))} distinct signatures)`,
      `bare kafkajs pipe   ${pipeRate.toFixed(0)} events/s`,
      `reflector           ${reflectorRate.toFixed(0)} events/s`,
      `mean stage times    ${stages}`,
    ],
    ratio,
    goal: "≥ 0.5 of the pipe",
    met: ratio >= 0.5,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchE2e());
  process.exit(0);
}
