import { describe, expect, it } from "vitest";
import type { KafkaMessage, Producer } from "kafkajs";
import { createEventRunner, type Work } from "../../../../src/adapters/kafka/event-runner.js";
import { OutageGate } from "../../../../src/adapters/kafka/outage-gate.js";
import { createOutputPublisher } from "../../../../src/adapters/kafka/output-publisher.js";
import { createJsonCodec } from "../../../../src/adapters/schema-registry/value-codec.js";
import { createConsumerMetrics } from "../../../../src/observability/consumer-metrics.js";
import { createLogger } from "../../../../src/observability/logger.js";
import { createMetrics } from "../../../../src/observability/metrics.js";
import type { CrashCounter } from "../../../../src/pipeline/ports.js";
import { ReflectorError } from "../../../../src/domain/errors.js";
import {
  parseTenantTopicBinding,
  type TenantTopicBinding,
} from "../../../../src/domain/tenant-topic-binding.js";
import { eventFacts } from "../../../../src/pipeline/event-facts.js";
import type { TaskProcessor } from "../../../../src/pipeline/task-processor.js";
import { createOfflineProcessor, createFakeIndex, createFakeStore } from "../../../support/fakes.js";
import { taskEvent } from "../../../support/task-events.js";

function work(offset = "3"): Work {
  const event = taskEvent();
  const message = {
    key: Buffer.from(event.loopId),
    value: Buffer.from(JSON.stringify(event)),
    headers: {},
    offset,
    timestamp: "0",
    attributes: 0,
  } as KafkaMessage;
  return { topic: "in", partition: 0, message, event: null, signature: null };
}

function setup(
  processor: TaskProcessor,
  options: {
    crashes?: CrashCounter;
    topicBytes?: number;
    tenantBinding?: TenantTopicBinding;
    outage?: OutageGate;
  } = {},
) {
  const metrics = createMetrics();
  const topics = { reflectionAccepted: "acc", reflectionRejected: "rej", loopDecision: "dec" };
  return createEventRunner({
    groupId: "g",
    retryTopic: "retry",
    deadLetterTopic: "dlq",
    codec: createJsonCodec(),
    processor,
    publisher: createOutputPublisher({
      producer: {} as Producer,
      codec: createJsonCodec(),
      topics,
      source: "/test",
    }),
    limits: {
      topicBytes: (t) => (t === "dlq" ? 1_048_588 : (options.topicBytes ?? 1_048_588)),
      requestBytes: 1_048_576,
    },
    outage: options.outage ?? new OutageGate({ onEnter: () => undefined, onLeave: () => undefined }),
    ...(options.tenantBinding ? { tenantBinding: options.tenantBinding } : {}),
    crashes: options.crashes,
    maxCrashesPerRecord: 3,
    maxCrashingRecords: 2,
    logger: createLogger("silent"),
    metrics,
    consumerMetrics: createConsumerMetrics(metrics.registry),
    maxAttempts: 1,
    retryBaseMs: 1,
    retryTopicDelayMs: 1,
  });
}

const factsOf = (event: Parameters<typeof eventFacts>[0]) => eventFacts(event, "full");
const failing: TaskProcessor = { process: () => Promise.reject(new TypeError("x is undefined")), factsOf };
const header = (done: Awaited<ReturnType<ReturnType<typeof setup>["run"]>>, name: string) =>
  done.messages[0]?.messages[0]?.headers?.[name]?.toString();

describe("event runner", () => {
  /** Counts like the Redis counter: per record, and distinct records crashing (no window here). */
  function counter() {
    const counts = new Map<string, number>();
    const crashes: CrashCounter = {
      record: (ref) => {
        counts.set(ref, (counts.get(ref) ?? 0) + 1);
        return Promise.resolve({ crashes: counts.get(ref) ?? 0, crashingRecords: counts.size });
      },
    };
    return { counts, crashes };
  }

  it("crashes on a bug, and dead-letters the record that keeps crashing the processor", async () => {
    const { counts, crashes } = counter();
    const runner = setup(failing, { crashes });
    const signal = new AbortController().signal;
    // Each run stands for one life of the process: it crashes, restarts, reads the record again.
    await expect(runner.run(work(), signal)).rejects.toThrow(TypeError);
    await expect(runner.run(work(), signal)).rejects.toThrow(TypeError);
    const done = await runner.run(work(), signal);
    expect(done.messages[0]?.topic).toBe("dlq");
    expect(header(done, "reflector.error.code")).toBe("CRASH_LOOP");
    expect(header(done, "reflector.error.message")).toMatch(
      /crashed the processor 3 times: INTERNAL: x is undefined/,
    );
    expect(counts.get("in/0/3")).toBe(3);
    // Another record's count is its own.
    await expect(runner.run(work("4"), signal)).rejects.toThrow(TypeError);
  });

  it("keeps crashing, dead-lettering nothing, when many records crash (the processor is broken)", async () => {
    const { crashes } = counter();
    const runner = setup(failing, { crashes });
    const signal = new AbortController().signal;
    for (const offset of ["1", "2", "3"]) {
      await expect(runner.run(work(offset), signal)).rejects.toThrow(TypeError);
    }
    // Three records crashed (more than 2): the third crash of record 1 is not its fault.
    await expect(runner.run(work("1"), signal)).rejects.toThrow(TypeError);
    await expect(runner.run(work("1"), signal)).rejects.toThrow(TypeError);
  });

  it("dead-letters as CRASH_LOOP a record whose deliveries never finish (a stall or a kill throws nothing)", async () => {
    const deliveries = new Map<string, number>();
    const crashes: CrashCounter = {
      record: () => Promise.resolve({ crashes: 1, crashingRecords: 1 }),
      begin: (ref) => {
        deliveries.set(ref, (deliveries.get(ref) ?? 0) + 1);
        return Promise.resolve({ deliveries: deliveries.get(ref) ?? 0, crashingRecords: deliveries.size });
      },
      finish: (ref) => {
        deliveries.delete(ref);
        return Promise.resolve();
      },
    };
    const stalled: TaskProcessor = { process: () => new Promise(() => undefined), factsOf };
    const runner = setup(stalled, { crashes });
    // Each delivery stands for one life of a pod the liveness probe killed mid-record.
    for (let life = 0; life < 3; life++) {
      void runner.run(work(), new AbortController().signal);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const done = await runner.run(work(), new AbortController().signal);
    expect(done.messages[0]?.topic).toBe("dlq");
    expect(header(done, "reflector.error.code")).toBe("CRASH_LOOP");
    expect(header(done, "reflector.error.message")).toMatch(/delivered 4 times without finishing/);
    done.afterCommit();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(deliveries.has("in/0/3")).toBe(false);

    // A record that finishes is forgotten: its next delivery starts from one.
    const fine = setup(
      createOfflineProcessor({ store: createFakeStore().store, index: createFakeIndex().index }),
      {
        crashes,
      },
    );
    (await fine.run(work("8"), new AbortController().signal)).afterCommit();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(deliveries.has("in/0/8")).toBe(false);
  });

  it("still crashes when the count cannot be kept (Redis down)", async () => {
    const runner = setup(failing, { crashes: { record: () => Promise.reject(new Error("ECONNREFUSED")) } });
    await expect(runner.run(work(), new AbortController().signal)).rejects.toThrow(TypeError);
  });

  it("dead-letters an event whose output its topic would refuse, instead of failing the batch", async () => {
    const store = createFakeStore();
    const processor = createOfflineProcessor({ store: store.store, index: createFakeIndex().index });
    const runner = setup(processor, { topicBytes: 1_500 });
    const done = await runner.run(work(), new AbortController().signal);
    expect(done.messages[0]?.topic).toBe("dlq");
    expect(header(done, "reflector.error.code")).toBe("OUTPUT_TOO_LARGE");
    expect(header(done, "reflector.error.message")).toMatch(
      /record would be \d+ bytes, over the topic's limit of 1500/,
    );
  });

  it("publishes the outputs when they fit", async () => {
    const processor = createOfflineProcessor({
      store: createFakeStore().store,
      index: createFakeIndex().index,
    });
    const done = await setup(processor).run(work(), new AbortController().signal);
    expect(done.messages.map((m) => m.topic).sort()).toEqual(["acc", "dec"]);
  });
});

describe("event runner under TENANT_TOPIC_BINDING", () => {
  const binding = parseTenantTopicBinding("tenant-a=in,tenant-b=other");
  const offline = () =>
    createOfflineProcessor({ store: createFakeStore().store, index: createFakeIndex().index });
  const on = (topic: string, tenantId: string, headers: Record<string, string> = {}): Work => {
    const base = work();
    const event = { ...taskEvent(), tenantId };
    base.message.value = Buffer.from(JSON.stringify(event));
    base.message.headers = headers;
    return { ...base, topic };
  };
  const signal = new AbortController().signal;

  it("processes an event of the topic's tenant and dead-letters another tenant's, with the reason", async () => {
    const runner = setup(offline(), { tenantBinding: binding });
    const ok = await runner.run(on("in", "tenant-a"), signal);
    expect(ok.messages.map((m) => m.topic)).not.toContain("dlq");
    const spoofed = await runner.run(on("in", "tenant-b"), signal);
    expect(spoofed.messages[0]?.topic).toBe("dlq");
    expect(header(spoofed, "reflector.error.code")).toBe("TENANT_TOPIC_MISMATCH");
    expect(header(spoofed, "reflector.error.message")).toBe(
      'tenantId "tenant-b" arrived on topic in, which is bound to tenant "tenant-a"',
    );
  });

  it("ignores an original-topic header on an input topic (the producer's word), and honours it on the retry topic", async () => {
    const runner = setup(offline(), { tenantBinding: binding });
    const forged = await runner.run(on("in", "tenant-b", { "reflector.original.topic": "other" }), signal);
    expect(header(forged, "reflector.error.code")).toBe("TENANT_TOPIC_MISMATCH");
    const retried = await runner.run(
      on("retry", "tenant-b", { "reflector.original.topic": "other" }),
      signal,
    );
    expect(retried.messages.map((m) => m.topic)).not.toContain("dlq");
    const retriedSpoof = await runner.run(
      on("retry", "tenant-b", { "reflector.original.topic": "in" }),
      signal,
    );
    expect(header(retriedSpoof, "reflector.error.code")).toBe("TENANT_TOPIC_MISMATCH");
  });

  it("holds an event over its tenant's LLM budget without closing the outage gate, then processes it", async () => {
    let calls = 0;
    const inner = offline();
    const overBudgetTwice: TaskProcessor = {
      process: (event, source) => {
        calls += 1;
        if (calls <= 2) {
          return Promise.reject(new ReflectorError("LLM_BUDGET_EXHAUSTED", "tenant-a is over budget"));
        }
        return inner.process(event, source);
      },
      factsOf: inner.factsOf,
    };
    const entered: string[] = [];
    const outage = new OutageGate({ onEnter: (code) => entered.push(code), onLeave: () => undefined });
    const runner = setup(overBudgetTwice, { outage });
    const done = await runner.run(on("in", "tenant-a"), signal);
    expect(calls).toBe(3);
    expect(done.messages.map((m) => m.topic)).not.toContain("dlq");
    expect(done.messages.map((m) => m.topic)).not.toContain("retry");
    expect(entered).toEqual([]);
  });

  it("derives an event's facts once, when the record is decoded, and hands them to the processor", async () => {
    const inner = createOfflineProcessor({ store: createFakeStore().store, index: createFakeIndex().index });
    const derived: unknown[] = [];
    const received: unknown[] = [];
    const processor: TaskProcessor = {
      factsOf: (event) => {
        const facts = inner.factsOf(event);
        derived.push(facts);
        return facts;
      },
      process: (event, source, facts) => {
        received.push(facts);
        return inner.process(event, source, facts);
      },
    };
    const runner = setup(processor);
    const record = work();
    // The consumer prepares the record up front (its ordering key), then runs it.
    const facts = await runner.prepare(record);
    expect(record.facts).toBe(facts);
    await runner.run(record, new AbortController().signal);
    expect(derived).toEqual([facts]);
    expect(received[0]).toBe(facts);
  });

  it("gives an event deferred for its tenant's share, which then fails, its retry-topic round", async () => {
    const generatorDown: TaskProcessor = {
      process: () => Promise.reject(new ReflectorError("GENERATOR_FAILED", "the model answered 500")),
      factsOf,
    };
    const runner = setup(generatorDown);
    const read = (count: string): Work => {
      const record = work();
      record.message.headers = { "reflector.retry.count": count, "reflector.original.topic": "in" };
      return { ...record, topic: "retry" };
    };
    const signal = new AbortController().signal;
    const deferred = await runner.run(read("0"), signal);
    expect(deferred.messages[0]?.topic).toBe("retry");
    expect(header(deferred, "reflector.retry.count")).toBe("1");
    // A record that failed before is in its last round: dead-lettered.
    const failedBefore = await runner.run(read("1"), signal);
    expect(failedBefore.messages[0]?.topic).toBe("dlq");
    expect(header(failedBefore, "reflector.error.code")).toBe("RETRIES_EXHAUSTED");
  });

  it("hands a record to the retry topic unprocessed when deferred", () => {
    const runner = setup(failing);
    const done = runner.defer(work("12"));
    if (!done) throw new Error("not deferred");
    expect(done.messages[0]?.topic).toBe("retry");
    expect(header(done, "reflector.retry.count")).toBe("0");
    expect(header(done, "reflector.original.offset")).toBe("12");
  });
});

describe("event runner: a record back from the retry topic", () => {
  it("is the record it was read as first: when that one's processing committed, its outputs are published again", async () => {
    const processor = createOfflineProcessor({
      store: createFakeStore().store,
      index: createFakeIndex().index,
    });
    const runner = setup(processor);
    const first = work("7");
    // Its run was handed over (or its commit lost) after the event was stored: its outputs never left.
    await runner.run(first, new AbortController().signal);
    const copy: Work = {
      topic: "retry",
      partition: 4,
      message: {
        ...first.message,
        offset: "90",
        headers: {
          "reflector.original.topic": "in",
          "reflector.original.partition": "0",
          "reflector.original.offset": "7",
        },
      } as KafkaMessage,
      event: null,
      signature: null,
    };
    const again = await runner.run(copy, new AbortController().signal);
    expect(again.messages.map((m) => m.topic).sort()).toEqual(["acc", "dec"]);
  });
});
