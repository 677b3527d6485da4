import { Partitioners, type ConsumerConfig, type Kafka, type ProducerConfig } from "kafkajs";
import { describe, expect, it } from "vitest";
import { createProducer } from "../../../../src/adapters/kafka/producers.js";
import {
  createSimpleConsumer,
  type SimpleConsumerRun,
} from "../../../../src/adapters/kafka/simple-consumer.js";
import { ReflectorError } from "../../../../src/domain/errors.js";
import { createLogger } from "../../../../src/observability/logger.js";

/** A client that records how its producers and consumers were configured and what happened. */
function fakeKafka() {
  const seen = {
    producers: [] as ProducerConfig[],
    consumers: [] as ConsumerConfig[],
    subscribed: [] as { topic: string; fromBeginning: boolean }[],
    disconnected: [] as string[],
    crash: null as ((event: { payload: { error: Error } }) => void) | null,
  };
  const kafka = {
    producer: (config: ProducerConfig) => {
      seen.producers.push(config);
      return {
        connect: () => Promise.resolve(),
        disconnect: () => {
          seen.disconnected.push("producer");
          return Promise.resolve();
        },
      };
    },
    consumer: (config: ConsumerConfig) => {
      seen.consumers.push(config);
      return {
        events: { CRASH: "consumer.crash" },
        on: (_event: string, listener: (event: { payload: { error: Error } }) => void) => {
          seen.crash = listener;
        },
        connect: () => Promise.resolve(),
        subscribe: (s: { topic: string; fromBeginning: boolean }) => {
          seen.subscribed.push(s);
          return Promise.resolve();
        },
        run: () => Promise.resolve(),
        disconnect: () => {
          seen.disconnected.push("consumer");
          return Promise.resolve();
        },
      };
    },
  };
  return { kafka: kafka as unknown as Kafka, seen };
}

/** A started simple consumer and the run context its handler was given. */
async function started(options: { retryBaseMs?: number; onCrash?: (error: Error) => void } = {}) {
  const { kafka, seen } = fakeKafka();
  const given: { run?: SimpleConsumerRun } = {};
  const consumer = createSimpleConsumer({
    kafka,
    name: "test consumer",
    groupId: "g.test",
    topic: "input",
    fromBeginning: true,
    sessionTimeoutMs: 6_000,
    retryBaseMs: options.retryBaseMs ?? 1,
    logger: createLogger("silent"),
    ...(options.onCrash ? { onCrash: options.onCrash } : {}),
    handler: (context) => {
      given.run = context;
      return { eachMessage: () => Promise.resolve() };
    },
  });
  await consumer.start();
  if (!given.run) throw new Error("the handler was not built at start");
  return { consumer, run: given.run, seen };
}

describe("the producer factory", () => {
  it("builds an idempotent producer: one request in flight, no auto-created topic, the Java partitioner, unlimited retries", () => {
    const { kafka, seen } = fakeKafka();
    createProducer(kafka);
    expect(seen.producers).toEqual([
      {
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
      },
    ]);
  });

  it("makes it transactional with a short first retry when asked", () => {
    const { kafka, seen } = fakeKafka();
    createProducer(kafka, { transactionalId: "reflector-tx", initialRetryTime: 10 });
    expect(seen.producers[0]).toMatchObject({
      idempotent: true,
      transactionalId: "reflector-tx",
      maxInFlightRequests: 1,
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 10, maxRetryTime: 30_000 },
    });
  });
});

describe("the simple consumer", () => {
  it("joins its own group on its topic, heartbeats within the session and is never restarted by the client", async () => {
    const { consumer, seen } = await started();
    expect(seen.producers).toHaveLength(1);
    expect(seen.producers[0]).toMatchObject({ idempotent: true, allowAutoTopicCreation: false });
    const config = seen.consumers[0];
    expect(config).toMatchObject({
      groupId: "g.test",
      allowAutoTopicCreation: false,
      sessionTimeout: 6_000,
      heartbeatInterval: 2_000,
    });
    expect(await config?.retry?.restartOnFailure?.(new Error("boom"))).toBe(false);
    expect(seen.subscribed).toEqual([{ topic: "input", fromBeginning: true }]);
    await consumer.stop();
    expect(seen.disconnected).toEqual(["consumer", "producer"]);
  });

  it("retries an outage until it passes and returns the work's result", async () => {
    const { consumer, run } = await started();
    let calls = 0;
    const result = await run.untilDone("storing", () => {
      calls += 1;
      if (calls < 3) return Promise.reject(new ReflectorError("STORE_UNAVAILABLE", "postgres away"));
      return Promise.resolve("stored");
    });
    expect(result).toBe("stored");
    expect(calls).toBe(3);
    await consumer.stop();
  });

  it("does not retry a bug: the error ends the work at once", async () => {
    const { consumer, run } = await started();
    let calls = 0;
    const bug = new TypeError("undefined is not a function");
    await expect(
      run.untilDone("storing", () => {
        calls += 1;
        return Promise.reject(bug);
      }),
    ).rejects.toBe(bug);
    expect(calls).toBe(1);
    await consumer.stop();
  });

  it("a stop wakes a long back-off and ends the work unfinished", async () => {
    const { consumer, run } = await started({ retryBaseMs: 60_000 });
    const outage = new ReflectorError("STORE_UNAVAILABLE", "postgres away");
    let calls = 0;
    const work = run.untilDone("storing", () => {
      calls += 1;
      return Promise.reject(outage);
    });
    const began = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await consumer.stop();
    // The back-off (30 s at least) is cut short; the next attempt sees the stop and gives up.
    await expect(work).rejects.toBe(outage);
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(calls).toBe(2);
  });

  it("reports a crash while running, and none once stopping", async () => {
    const crashes: Error[] = [];
    const { consumer, seen } = await started({ onCrash: (error) => crashes.push(error) });
    seen.crash?.({ payload: { error: new Error("group coordinator gone") } });
    expect(crashes.map((e) => e.message)).toEqual(["group coordinator gone"]);
    await consumer.stop();
    seen.crash?.({ payload: { error: new Error("socket closed while stopping") } });
    expect(crashes).toHaveLength(1);
  });
});
