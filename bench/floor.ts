import type { Consumer, Producer } from "kafkajs";
import pg from "pg";
import { ensureTopics } from "../src/adapters/kafka/topics.js";
import { parseTaskCompleted } from "../src/domain/contracts/index.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import {
  benchEvent,
  benchSetup,
  databaseUrl,
  deleteTopics,
  produceEvents,
  startCounter,
  type BenchResult,
  type BenchSetup,
} from "./support.js";

/**
 * What the e2e goal (≥ 0.25 of a bare consume→produce pipe) leaves room for. On the same backlog
 * and machine, in one run, it measures pipes that do only the least that issue 5's effectively-
 * once guarantee requires, and the CPU of Reflector's own per-event logic without any I/O:
 *   1. the bare kafkajs pipe (the e2e bench's ceiling): eachBatch + sendBatch, auto-commit;
 *   2. the same pipe made exactly-once: read_committed, one transactional producer per partition,
 *      outputs and consumed offsets in one Kafka transaction per batch;
 *   3. 2 + the idempotency record in Postgres, batched: one INSERT … ON CONFLICT DO NOTHING of the
 *      whole batch's event ids before the Kafka transaction (the most group commit can do: events
 *      finish at different times, so a real group is smaller than a batch);
 *   4. 2 + that record written per event: one autocommit INSERT round trip per event, ten at once;
 *   5. Reflector's processor on in-memory ports (decode, validate, signature, heuristic reflection
 *      and judging for new signatures, loop decision, output JSON), one core, no I/O at all.
 * 3 and 5 in series (1 ÷ (1/3 + 1/5)) is the most a processor with group commit and this logic
 * could reach with one core for its logic; far below 0.25 of 1, the goal is out of reach here.
 */

export async function benchFloor(
  events = Number(process.env.BENCH_FLOOR_EVENTS ?? 20000),
): Promise<BenchResult> {
  const setup = await benchSetup("floor", 6);
  const { kafka, config, tenantId } = setup;
  const stream = Array.from({ length: events }, (_, i) =>
    benchEvent(tenantId, i, i % Math.ceil(events / 20)),
  );
  await produceEvents(kafka, config.topics.taskCompleted, stream);

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query(
    "CREATE TABLE IF NOT EXISTS bench_floor_events (run text NOT NULL, event_id text NOT NULL, PRIMARY KEY (run, event_id))",
  );
  try {
    // The first drain of the input reads it from disk and warms the JIT; the bare pipe runs first
    // and last and the faster run is the ceiling, so nothing below is flattered by a cold start.
    const bareFirst = await barePipe(setup, "bare", events);
    const eos = await runPipe(setup, "eos", events);
    const batched = await runPipe(setup, "eos-pg-batch", events, undefined, async (run, ids) => {
      await pool.query(
        "INSERT INTO bench_floor_events (run, event_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
        [run, ids],
      );
    });
    const perEvent = await runPipe(setup, "eos-pg-each", events, undefined, async (run, ids) => {
      for (let i = 0; i < ids.length; i += 10) {
        await Promise.all(
          ids
            .slice(i, i + 10)
            .map((id) =>
              pool.query(
                "INSERT INTO bench_floor_events (run, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                [run, id],
              ),
            ),
        );
      }
    });
    const bare = Math.max(bareFirst, await barePipe(setup, "bare-again", events));
    const compute = await computeOnly(stream.map((e) => Buffer.from(JSON.stringify(e))));
    const ratio = (rate: number) => (rate / bare).toFixed(3);
    const combined = 1 / (1 / batched + 1 / compute.rate);
    return {
      name: "exactly-once floor (what the e2e goal leaves room for, 6 partitions)",
      lines: [
        `events ${String(events)} (${String(Math.ceil(events / 20))} distinct signatures)`,
        `1 bare kafkajs pipe                         ${bare.toFixed(0)} events/s (faster of ${bareFirst.toFixed(0)} first and the run after the others)`,
        `2 exactly-once pipe (Kafka transactions)    ${eos.toFixed(0)} events/s  ${ratio(eos)} of 1`,
        `3 2 + idempotency rows, one INSERT a batch  ${batched.toFixed(0)} events/s  ${ratio(batched)} of 1`,
        `4 2 + idempotency row, one INSERT an event  ${perEvent.toFixed(0)} events/s  ${ratio(perEvent)} of 1`,
        `5 processor logic, in-memory ports, no I/O  ${compute.rate.toFixed(0)} events/s  ${ratio(compute.rate)} of 1 (one core, ${(1000 / compute.rate).toFixed(3)} ms CPU per event)`,
        `  per event: ${compute.breakdown}`,
        `3 and 5 in series (group commit + logic)    ${combined.toFixed(0)} events/s  ${ratio(combined)} of 1`,
      ],
      ratio: combined / bare,
      goal: "context for e2e: 3 and 5 in series ≥ 0.25 of 1 would leave room for e2e's goal",
      met: combined / bare >= 0.25,
    };
  } finally {
    await pool.query("DROP TABLE IF EXISTS bench_floor_events").catch(() => undefined);
    await pool.end();
    await deleteTopics(setup);
  }
}

/** The bare kafkajs pipe: eachBatch + sendBatch, auto-commit; events/s. */
export function barePipe(setup: BenchSetup, name: string, events: number): Promise<number> {
  return runPipe(setup, name, events, async (producer, topic, messages) => {
    await producer.sendBatch({ topicMessages: [{ topic, messages }] });
  });
}

type Send = (
  producer: Producer,
  topic: string,
  messages: { key: Buffer | null; value: Buffer | null }[],
) => Promise<void>;

/**
 * Drains the input topic with its own group into a pipe topic of its own and returns events/s
 * from the first batch consumed to the last output. Without `send`, each batch goes out in a Kafka transaction of the
 * partition's own transactional producer, with the consumed offsets; `record` runs first.
 */
async function runPipe(
  setup: BenchSetup,
  name: string,
  events: number,
  send?: Send,
  record?: (run: string, eventIds: string[]) => Promise<void>,
): Promise<number> {
  const { kafka, config } = setup;
  const run = `${setup.id}-${name}`;
  const topic = `${setup.pipeTopic}.${name}`;
  await ensureTopics(kafka, { names: [topic], partitions: 6, replicationFactor: 1 });
  const counter = await startCounter(kafka, [topic]);
  const groupId = `bench-floor-${run}`;
  const producers = new Map<number, Producer>();
  // The ceiling: kafkajs' defaults (not idempotent, requests pipelined), shared by the partitions.
  const plain = send ? kafka.producer() : null;
  await plain?.connect();
  const producerFor = async (partition: number): Promise<Producer> => {
    const existing = producers.get(partition);
    if (existing) return existing;
    const producer = kafka.producer({
      transactionalId: `${groupId}-${String(partition)}`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    producers.set(partition, producer);
    await producer.connect();
    return producer;
  };
  let firstBatchAt = 0;
  const consumer: Consumer = kafka.consumer({ groupId, readUncommitted: false });
  await consumer.connect();
  await consumer.subscribe({ topics: [config.topics.taskCompleted], fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: 6,
    autoCommit: !!send,
    eachBatch: async (payload) => {
      const { batch } = payload;
      if (firstBatchAt === 0) firstBatchAt = performance.now();
      const messages = batch.messages.map((m) => ({ key: m.key, value: m.value }));
      if (messages.length === 0) return;
      if (send && plain) {
        await send(plain, topic, messages);
        return;
      }
      if (record) {
        // The bench events are JSON; the id is what an idempotent write is keyed by.
        await record(
          run,
          batch.messages.map((m) => (JSON.parse(m.value?.toString() ?? "{}") as { eventId: string }).eventId),
        );
      }
      const producer = await producerFor(batch.partition);
      const tx = await producer.transaction();
      try {
        await tx.send({ topic, messages });
        await tx.sendOffsets({
          consumerGroupId: groupId,
          topics: [
            {
              topic: batch.topic,
              partitions: [{ partition: batch.partition, offset: String(Number(batch.lastOffset()) + 1) }],
            },
          ],
        });
        await tx.commit();
      } catch (err) {
        await tx.abort().catch(() => undefined);
        throw err;
      }
      payload.resolveOffset(batch.lastOffset());
    },
  });
  await counter.waitFor(events, 600_000);
  // Drain time: from the first batch consumed to the last output. The counter's own rate leaves
  // out its first arriving batch, which for a pipe that moves 5,000 events in a few batches of
  // hundreds swings by 3× between runs.
  const rate = events / ((counter.state.lastAt - firstBatchAt) / 1000);
  await consumer.disconnect();
  await plain?.disconnect();
  for (const producer of producers.values()) await producer.disconnect();
  await counter.stop();
  return rate;
}

/** Reflector's per-event logic on in-memory ports, one core, no I/O: events/s and where it goes. */
async function computeOnly(values: Buffer[]) {
  const store = createFakeStore();
  const index = createFakeIndex();
  const processor = createOfflineProcessor({ store: store.store, index: index.index });
  const spent = { decode: 0, known: 0, knownCount: 0, fresh: 0, freshCount: 0, encode: 0 };
  const started = performance.now();
  for (const value of values) {
    let t = performance.now();
    const event = parseTaskCompleted(JSON.parse(value.toString()));
    spent.decode += performance.now() - t;
    t = performance.now();
    const result = await processor.process(event);
    const took = performance.now() - t;
    if (result.generatorCalls > 0) {
      spent.fresh += took;
      spent.freshCount += 1;
    } else {
      spent.known += took;
      spent.knownCount += 1;
    }
    t = performance.now();
    for (const output of result.outputs) Buffer.from(JSON.stringify(output.value));
    spent.encode += performance.now() - t;
  }
  const seconds = (performance.now() - started) / 1000;
  const us = (ms: number, n: number) => `${((1000 * ms) / Math.max(1, n)).toFixed(1)} µs`;
  return {
    rate: values.length / seconds,
    breakdown:
      `decode+validate ${us(spent.decode, values.length)}, known signature ${us(spent.known, spent.knownCount)}, ` +
      `new signature (reflect + judge) ${us(spent.fresh, spent.freshCount)}, encode outputs ${us(spent.encode, values.length)}`,
  };
}
