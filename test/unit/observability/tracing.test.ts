import { afterEach, describe, expect, it } from "vitest";
import { context, propagation, trace, type Tracer } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { KafkaMessage, Producer } from "kafkajs";
import { createEventRunner, type Work } from "../../../src/adapters/kafka/event-runner.js";
import { OutageGate } from "../../../src/adapters/kafka/outage-gate.js";
import { createOutputPublisher } from "../../../src/adapters/kafka/output-publisher.js";
import { traceRuns } from "../../../src/adapters/kafka/traced-event-runner.js";
import { createJsonCodec } from "../../../src/adapters/schema-registry/value-codec.js";
import { loadConfig, loadTracingConfig } from "../../../src/config/config.js";
import { signatureFor } from "../../../src/domain/signature.js";
import { createConsumerMetrics } from "../../../src/observability/consumer-metrics.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetrics } from "../../../src/observability/metrics.js";
import { withSpans } from "../../../src/observability/traced-stage-timer.js";
import { instrumentLibraries, startTracing, type Tracing } from "../../../src/observability/tracing.js";
import { eventFacts } from "../../../src/pipeline/event-facts.js";
import type { TaskProcessor } from "../../../src/pipeline/task-processor.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

const logger = createLogger("silent");
const incoming = {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
};
const traceparent = `00-${incoming.traceId}-${incoming.spanId}-01`;
const tracingEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
  OTEL_SERVICE_NAME: "reflector-test",
};

let tracing: Tracing | null = null;
afterEach(async () => {
  await tracing?.shutdown(1_000);
  tracing = null;
});

/** The SDK as the processor starts it, exporting to memory instead of OTLP. */
async function startInMemory(env: Record<string, string> = {}) {
  const exporter = new InMemorySpanExporter();
  const config = loadConfig({ ...tracingEnv, ...env }).tracing;
  tracing = await startTracing(config, logger, {
    exporter,
    spanProcessor: new SimpleSpanProcessor(exporter),
  });
  return { exporter, tracer: tracing.tracer };
}

function runnerFor(processor: TaskProcessor, tracer: Tracer) {
  const metrics = createMetrics();
  const runner = createEventRunner({
    groupId: "g",
    retryTopic: "retry",
    deadLetterTopic: "dlq",
    codec: createJsonCodec(),
    processor,
    publisher: createOutputPublisher({
      producer: {} as Producer,
      codec: createJsonCodec(),
      topics: { reflectionAccepted: "acc", reflectionRejected: "rej", loopDecision: "dec" },
      source: "/test",
    }),
    limits: { topicBytes: () => 1_048_588, requestBytes: 1_048_576 },
    outage: new OutageGate({ onEnter: () => undefined, onLeave: () => undefined }),
    maxCrashesPerRecord: 3,
    maxCrashingRecords: 2,
    logger,
    metrics,
    consumerMetrics: createConsumerMetrics(metrics.registry),
    maxAttempts: 1,
    retryBaseMs: 1,
    retryTopicDelayMs: 1,
  });
  return traceRuns(runner, tracer, { groupId: "g", deadLetterTopic: "dlq", retryTopic: "retry" });
}

/** A consumed record as the consumer prepares it (decoded up front, with its signature). */
function workFor(headers: KafkaMessage["headers"], value?: string): Work {
  const event = taskEvent({ tenantId: "tenant-trace" });
  const message = {
    key: Buffer.from(event.loopId),
    value: Buffer.from(value ?? JSON.stringify(event)),
    headers,
    offset: "7",
    timestamp: "0",
    attributes: 0,
  } as KafkaMessage;
  const decoded = value === undefined ? event : null;
  return {
    topic: "in",
    partition: 2,
    message,
    event: decoded,
    signature: decoded ? `${decoded.tenantId}\u0000${signatureFor(decoded)}` : null,
  };
}

function tree(spans: ReadableSpan[]) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
  const path = (s: ReadableSpan): string[] => {
    const parent = byId.get(parentOf(s) ?? "");
    return parent ? [...path(parent), s.name] : [s.name];
  };
  return { byId, parentOf, path, named: (name: string) => spans.filter((s) => s.name === name) };
}

describe("Reflector's spans", () => {
  it("one event: consume → reflect → generate (the LLM call) → judge, persist, publish, under the incoming traceparent", async () => {
    const { exporter, tracer } = await startInMemory();
    const metrics = createMetrics();
    const processor = createOfflineProcessor(
      { store: createFakeStore().store, index: createFakeIndex().index },
      { timer: withSpans(metrics.timer, tracer) },
    );
    const work = workFor({ traceparent, tracestate: "vendor=1" });
    const event = work.event;
    if (!event) throw new Error("decoded up front");
    const done = await runnerFor(processor, tracer).run(work, new AbortController().signal);
    done.afterCommit();

    const spans = exporter.getFinishedSpans();
    const t = tree(spans);
    const [consume] = t.named("reflector.consume");
    if (!consume) throw new Error(`no consume span in ${spans.map((s) => s.name).join(", ")}`);
    // The agent's trace continues: same trace id, the producer's span as the parent.
    expect(consume.spanContext().traceId).toBe(incoming.traceId);
    expect(consume.parentSpanContext?.spanId).toBe(incoming.spanId);
    expect(spans.every((s) => s.spanContext().traceId === incoming.traceId)).toBe(true);

    const paths = spans.map((s) => t.path(s).join(" > "));
    expect(paths).toEqual(
      expect.arrayContaining([
        "reflector.consume",
        "reflector.consume > reflector.reflect",
        "reflector.consume > reflector.reflect > reflector.generate",
        "reflector.consume > reflector.reflect > reflector.judge",
        "reflector.consume > reflector.persist",
        "reflector.consume > reflector.publish",
      ]),
    );
    // Every stage is a span, nested under the event's span, but the single Redis and Postgres
    // reads: their instrumented calls are the spans.
    expect(new Set(spans.map((s) => s.name))).toEqual(
      new Set([
        "reflector.consume",
        "reflector.evaluate-answer",
        "reflector.embed",
        "reflector.reflect",
        "reflector.generate",
        "reflector.judge",
        "reflector.persist",
        "reflector.publish",
      ]),
    );

    const signature = signatureFor(event);
    expect(consume.attributes).toMatchObject({
      "reflector.tenant_id": "tenant-trace",
      "reflector.loop_id": event.loopId,
      "reflector.event_id": event.eventId,
      "reflector.signature": signature,
      "reflector.result": "processed",
      "messaging.system": "kafka",
      "messaging.destination.name": "in",
      "messaging.destination.partition.id": "2",
      "messaging.kafka.offset": 7,
      "messaging.consumer.group.name": "g",
    });
    const [reflect] = t.named("reflector.reflect");
    expect(reflect?.attributes["reflector.signature"]).toBe(signature);
    expect(["accepted", "accepted_with_warnings", "rejected"]).toContain(
      reflect?.attributes["reflector.verdict"],
    );
    expect(typeof reflect?.attributes["reflector.attempts"]).toBe("number");
    const [persist] = t.named("reflector.persist");
    expect(persist?.attributes).toMatchObject({
      "reflector.signature": signature,
      "reflector.verdict": reflect?.attributes["reflector.verdict"],
      "reflector.decision": "rerun",
      "reflector.committed": true,
    });
    expect(typeof t.named("reflector.judge")[0]?.attributes["reflector.quality_score"]).toBe("number");
    expect(t.named("reflector.publish")[0]?.attributes["messaging.batch.message_count"]).toBe(2);

    // No prompt bodies or trace text: attribute values are ids, names, numbers and verdicts.
    const values = spans.flatMap((s) => Object.values(s.attributes)).map(String);
    const texts = [event.task.description, event.error?.message, event.task.query].filter(
      (text): text is string => Boolean(text),
    );
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.filter((text) => values.some((v) => v.includes(text)))).toEqual([]);
    expect(Math.max(...values.map((v) => v.length))).toBeLessThan(100);

    // The outputs carry Reflector's publish span as their parent, in the agent's trace.
    const publish = t.named("reflector.publish")[0];
    for (const { messages } of done.messages) {
      for (const message of messages) {
        expect(message.headers?.traceparent?.toString()).toBe(
          `00-${incoming.traceId}-${publish?.spanContext().spanId ?? ""}-01`,
        );
        expect(message.headers?.tracestate?.toString()).toBe("vendor=1");
      }
    }
  });

  it("starts a new trace for a record without traceparent, and marks a dead-lettered one", async () => {
    const { exporter, tracer } = await startInMemory();
    const processor = createOfflineProcessor({
      store: createFakeStore().store,
      index: createFakeIndex().index,
    });
    const done = await runnerFor(processor, tracer).run(
      workFor({}, "{not json"),
      new AbortController().signal,
    );
    done.afterCommit();
    const [consume] = tree(exporter.getFinishedSpans()).named("reflector.consume");
    expect(consume?.parentSpanContext).toBeUndefined();
    expect(consume?.attributes["reflector.result"]).toBe("dead_lettered");
    expect(done.messages[0]?.messages[0]?.headers?.traceparent?.toString()).toContain(
      consume?.spanContext().traceId,
    );
  });

  it("records a crash on the consume span and a failed stage on its own span", async () => {
    const { exporter, tracer } = await startInMemory();
    const timer = withSpans(createMetrics().timer, tracer);
    const crashing: TaskProcessor = {
      process: () => timer.time("persist", () => Promise.reject(new TypeError("x is undefined"))),
      factsOf: (event) => eventFacts(event, "full"),
    };
    await expect(
      runnerFor(crashing, tracer).run(workFor({ traceparent }), new AbortController().signal),
    ).rejects.toThrow(TypeError);
    const t = tree(exporter.getFinishedSpans());
    for (const name of ["reflector.consume", "reflector.persist"]) {
      const [span] = t.named(name);
      expect(span?.status).toMatchObject({ code: 2, message: "TypeError: x is undefined" });
      expect(span?.events.map((e) => e.name)).toEqual(["exception"]);
    }
  });

  it("honours the sampler: parent-based by default, so an unsampled agent trace records nothing", async () => {
    const { exporter, tracer } = await startInMemory();
    const processor = createOfflineProcessor({
      store: createFakeStore().store,
      index: createFakeIndex().index,
    });
    const unsampled = `00-${incoming.traceId}-${incoming.spanId}-00`;
    const done = await runnerFor(processor, tracer).run(
      workFor({ traceparent: unsampled }),
      new AbortController().signal,
    );
    done.afterCommit();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("with no endpoint starts nothing: no SDK, no hooks, the API's no-op tracer", async () => {
    const config = loadConfig({}).tracing;
    expect(config).toMatchObject({ enabled: false, url: null });
    expect(await instrumentLibraries(config)).toBe(false);
    expect(await instrumentLibraries(loadTracingConfig({}))).toBe(false);
    tracing = await startTracing(config, logger);
    expect(tracing.enabled).toBe(false);
    const span = tracing.tracer.startSpan("anything");
    expect(span.isRecording()).toBe(false);
    span.end();
    // No global provider, context manager or propagator was registered.
    expect(trace.getTracer("x").startSpan("y").isRecording()).toBe(false);
    expect(context.with(trace.setSpan(context.active(), span), () => trace.getActiveSpan())).toBeUndefined();
    expect(propagation.fields()).toEqual([]);
  });

  it("stops the SDK on shutdown: the globals are back to no-ops", async () => {
    const { tracer } = await startInMemory();
    expect(tracer.startSpan("before").isRecording()).toBe(true);
    await tracing?.shutdown(1_000);
    tracing = null;
    expect(trace.getTracer("reflector").startSpan("after").isRecording()).toBe(false);
    expect(propagation.fields()).toEqual([]);
  });
});

describe("tracing settings", () => {
  it("reads the standard OTEL_* variables", () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=s%3Dcret, x-team=agents",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    }).tracing;
    expect(config).toEqual({
      enabled: true,
      url: "http://collector:4318/v1/traces",
      protocol: "http/json",
      headers: { "api-key": "s=cret", "x-team": "agents" },
      timeoutMs: 10_000,
      serviceName: "reflector",
      resourceAttributes: { "deployment.environment": "prod" },
      sampler: "parentbased_traceidratio",
      samplerRatio: 0.25,
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:4318/custom/traces",
      }).tracing.url,
    ).toBe("http://other:4318/custom/traces");
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" }).tracing
        .enabled,
    ).toBe(false);
  });

  it("lists every malformed tracing setting with the rest", () => {
    expect(() =>
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4317",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_TRACES_SAMPLER: "sometimes",
        OTEL_EXPORTER_OTLP_HEADERS: "novalue",
        KAFKA_BROKERS: "nohostport",
      }),
    ).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT[\s\S]*OTEL_EXPORTER_OTLP_PROTOCOL: http\/protobuf or http\/json \(gRPC is not supported[\s\S]*OTEL_EXPORTER_OTLP_HEADERS: each entry must be key=value[\s\S]*OTEL_TRACES_SAMPLER/,
    );
    expect(loadTracingConfig({ OTEL_TRACES_SAMPLER: "sometimes" })).toBeNull();
  });
});
