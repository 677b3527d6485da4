import { buildLlm } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import { parseTaskCompleted, type TaskCompleted } from "../src/domain/contracts/index.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { taskEvent } from "../test/support/task-events.js";
import { benchEvent, report, type BenchResult } from "./support.js";

/**
 * The CPU of the events that need no new reflection — a success the selection rule finalizes and
 * a failure whose lesson is known — through Reflector's own logic with the default embedder and
 * in-memory ports (no Kafka, Postgres or Redis): decode and validate the value, process, encode
 * the outputs. What the client libraries and round trips add is in e2e's CPU per event.
 */
export async function benchCheapEvents(
  events = Number(process.env.BENCH_CHEAP_EVENTS ?? 5000),
): Promise<BenchResult> {
  const config = loadConfig(
    Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("REFLECTOR_EMBEDDING"))),
  );
  const { embedder } = buildLlm(config);
  const processor = createOfflineProcessor(
    { store: createFakeStore().store, index: createFakeIndex().index },
    { embedder },
  );
  const tenantId = "bench-cheap";
  // The lessons the recurrences recall: 20 signatures, reflected once each before measuring.
  for (let s = 0; s < 20; s += 1) await processor.process(benchEvent(tenantId, 1_000_000 + s, s));
  const encode = (e: TaskCompleted) => Buffer.from(JSON.stringify(e));
  const recurrences = Array.from({ length: events }, (_, i) => encode(benchEvent(tenantId, i, i % 20)));
  const successes = Array.from({ length: events }, (_, i) =>
    encode(
      taskEvent({
        tenantId,
        eventId: `ok-${String(i)}`,
        loopId: `loop-ok-${String(i)}`,
        outcome: "success",
        error: undefined,
        scores: { quality: 0.95 },
      } as Partial<TaskCompleted>),
    ),
  );
  async function cpuPerEvent(values: Buffer[]): Promise<{ us: number; generatorCalls: number }> {
    let generatorCalls = 0;
    const before = process.cpuUsage();
    for (const value of values) {
      const result = await processor.process(parseTaskCompleted(JSON.parse(value.toString())));
      generatorCalls += result.generatorCalls;
      for (const output of result.outputs) Buffer.from(JSON.stringify(output.value));
    }
    const used = process.cpuUsage(before);
    return { us: (used.user + used.system) / values.length, generatorCalls };
  }
  // A first pass warms the JIT; the second is measured.
  await cpuPerEvent(recurrences.slice(0, 500));
  await cpuPerEvent(successes.slice(0, 500));
  const recurrence = await cpuPerEvent(recurrences);
  const success = await cpuPerEvent(successes);
  if (recurrence.generatorCalls + success.generatorCalls > 0)
    throw new Error("a cheap event called the generator: the bench's events are not what it measures");
  const worst = Math.max(recurrence.us, success.us);
  return {
    name: `cheap events (${embedder.name}, in-memory ports)`,
    lines: [
      `${String(events)} recognised recurrences (20 known lessons): ${recurrence.us.toFixed(0)} µs of CPU per event`,
      `${String(events)} successes finalized without reflection: ${success.us.toFixed(0)} µs of CPU per event`,
      "decode + validate + process + encode outputs, one thread, no I/O",
    ],
    ratio: worst / 1000,
    goal: "≤ 0.5 ms of CPU per cheap event (a fraction of a millisecond)",
    met: worst <= 500,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchCheapEvents());
  process.exit(0);
}
