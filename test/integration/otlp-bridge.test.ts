import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import kafkajs, { type Consumer, type Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTopics } from "../../src/adapters/kafka/topics.js";
import { LoopDecisionV1, TaskCompletedV1, type TaskCompleted } from "../../src/domain/contracts/index.js";
import { cliEnv } from "../support/cli-env.js";
import { startHarness, type Harness } from "../support/harness.js";
import { runMultiAgentTask, sdkTracer, serialize, type OtlpEncoding } from "../support/otel-traces.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The OTLP bridge end to end: spans made by the OpenTelemetry JS SDK, serialized by its own OTLP
 * serializers (the bytes a Collector's Kafka exporter writes), produced to Kafka, bridged into
 * task events and processed by the real processor to a loop decision.
 */
const { ConfigResourceTypes } = kafkajs;
const id = randomUUID().slice(0, 8);
const otlpTopic = `${id}.otlp_spans`;
const tenantId = `tenant-${id}`;
let h: Harness;
let producer: Producer;
let inputReader: Consumer;
interface InputRecord {
  key: string | null;
  ceId: string | undefined;
  traceparent: string | undefined;
  raw: string;
  event: TaskCompleted;
}
const inputs: InputRecord[] = [];

beforeAll(async () => {
  h = await startHarness({
    env: {
      OTLP_TOPIC: otlpTopic,
      OTLP_TRACE_GRACE_MS: "300",
      OTLP_TRACE_TIMEOUT_MS: "3000",
      OTLP_SWEEP_INTERVAL_MS: "100",
    },
  });
  producer = h.kafka.producer();
  await producer.connect();
  inputReader = h.kafka.consumer({ groupId: `input-reader-${id}` });
  await inputReader.connect();
  await inputReader.subscribe({ topic: h.config.topics.taskCompleted, fromBeginning: true });
  await inputReader.run({
    eachMessage: ({ message }) => {
      const header = (name: string) => message.headers?.[name]?.toString();
      const raw = message.value?.toString() ?? "";
      inputs.push({
        key: message.key?.toString() ?? null,
        ceId: header("ce_id"),
        traceparent: header("traceparent"),
        raw,
        event: JSON.parse(raw) as TaskCompleted,
      });
      return Promise.resolve();
    },
  });
});

afterAll(async () => {
  await inputReader.disconnect();
  await producer.disconnect();
  await h.close();
});

function sdkRun(conversationId: string | undefined, withRoot = true) {
  const sdk = sdkTracer({ "service.name": "churn-agents", "reflector.tenant_id": tenantId });
  const run = runMultiAgentTask(sdk.tracer, {
    ...(conversationId ? { conversationId } : {}),
    withRoot,
  });
  return { run, spans: sdk.finished() };
}

const decisionOf = (loopId: string) =>
  h.on(h.config.topics.loopDecision, (c) => c.value?.loopId === loopId)[0]?.value;

async function counter(name: string, result: string): Promise<number> {
  const metric = await h.app.metrics.registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => v.labels.result === result)?.value ?? 0;
}

describe("OTLP ingest bridge", () => {
  it.each<OtlpEncoding>(["protobuf", "json"])(
    "turns the SDK's %s export of a multi-agent run into one task event and a loop decision",
    async (encoding) => {
      const conversationId = `conv-${id}-${encoding}`;
      const { run, spans } = sdkRun(conversationId);
      await producer.send({
        topic: otlpTopic,
        messages: [{ key: run.traceId, value: serialize(spans, encoding) }],
      });

      const decision = await waitFor(() => decisionOf(conversationId), {
        what: "the loop decision",
        timeoutMs: 60_000,
      });
      expect(LoopDecisionV1.parse(decision)).toMatchObject({
        tenantId,
        loopId: conversationId,
        sourceEventId: `otlp-${run.traceId}`,
      });
      const published = inputs.filter((r) => r.ceId === `otlp-${run.traceId}`);
      expect(published).toHaveLength(1);
      const [record] = published;
      expect(record?.key).toBe(conversationId);
      expect(record?.traceparent).toMatch(new RegExp(`^00-${run.traceId}-[0-9a-f]{16}-01$`));
      const event = TaskCompletedV1.parse(record?.event);
      expect(event).toMatchObject({
        tenantId,
        projectId: "churn-agents",
        agentId: "orchestrator",
        outcome: "failure",
        error: {
          category: "tool_error",
          type: "query_timeout",
          message: "Query execution exceeded 30s limit",
        },
      });
      expect(event.events.map((e) => `${e.type}:${e.actor ?? ""}`)).toEqual([
        "system_event:orchestrator",
        "llm_call:orchestrator",
        "system_event:researcher",
        "tool_call:researcher",
        "tool_response:researcher",
        "tool_call:orchestrator",
        "tool_response:orchestrator",
        "error_event:orchestrator",
      ]);
      // The processor judged it like any agent's event: the reflection names the failing tool.
      // Published in the decision's transaction, but read by another consumer: wait for it too.
      const outcome = await waitFor(
        () =>
          h.on(h.config.topics.reflectionAccepted, (c) => c.value?.sourceEventId === `otlp-${run.traceId}`)[0]
            ?.value ??
          h.on(h.config.topics.reflectionRejected, (c) => c.value?.sourceEventId === `otlp-${run.traceId}`)[0]
            ?.value,
        { what: "the reflection outcome", timeoutMs: 30_000 },
      );
      expect(JSON.stringify(outcome)).toContain("postgres_query");
      const state = await h.pool.query<{ state: string; spans: string }>(
        "SELECT state, (SELECT count(*) FROM otlp_spans s WHERE s.trace_id = t.trace_id) AS spans FROM otlp_traces t WHERE trace_id = $1",
        [run.traceId],
      );
      expect(state.rows[0]).toEqual({ state: "published", spans: "0" });
    },
  );

  it("joins the spans of one trace sent in several records to several partitions", async () => {
    const conversationId = `conv-${id}-split`;
    const { run, spans } = sdkRun(conversationId);
    const root = spans.filter((s) => s.parentSpanContext === undefined);
    const children = spans.filter((s) => s.parentSpanContext !== undefined);
    expect(root).toHaveLength(1);
    // The root first, on its own partition; the children after it, in two records elsewhere.
    await producer.send({
      topic: otlpTopic,
      messages: [{ partition: 2, value: serialize(root, "protobuf") }],
    });
    await producer.send({
      topic: otlpTopic,
      messages: [
        { partition: 0, value: serialize(children.slice(0, 2), "json") },
        { partition: 1, value: serialize(children.slice(2), "protobuf") },
      ],
    });
    await waitFor(() => decisionOf(conversationId), { what: "the loop decision", timeoutMs: 60_000 });
    const published = inputs.filter((r) => r.ceId === `otlp-${run.traceId}`);
    expect(published).toHaveLength(1);
    expect(published[0]?.event.events).toHaveLength(8);
  });

  it("expires a trace whose root never ends, counts it and publishes nothing", async () => {
    const before = await counter("reflector_otlp_traces_total", "expired");
    const { run, spans } = sdkRun(`conv-${id}-rootless`, false);
    expect(spans.some((s) => s.parentSpanContext === undefined)).toBe(false);
    await producer.send({ topic: otlpTopic, messages: [{ value: serialize(spans, "protobuf") }] });
    await waitFor(
      async () => {
        const res = await h.pool.query<{ state: string }>(
          "SELECT state FROM otlp_traces WHERE trace_id = $1",
          [run.traceId],
        );
        return res.rows[0]?.state === "expired";
      },
      { what: "the trace to expire", timeoutMs: 30_000 },
    );
    // The counter moves right after the transaction that expired the trace.
    await waitFor(async () => (await counter("reflector_otlp_traces_total", "expired")) > before, {
      what: "the expired trace to be counted",
    });
    const left = await h.pool.query("SELECT 1 FROM otlp_spans WHERE trace_id = $1", [run.traceId]);
    expect(left.rowCount).toBe(0);
    expect(inputs.some((r) => r.ceId === `otlp-${run.traceId}`)).toBe(false);
    // A span of the trace that comes after it expired is late: counted, not stored.
    const lateBefore = await counter("reflector_otlp_spans_total", "late");
    const late = sdkRun(undefined);
    const again = JSON.parse(serialize(late.spans.slice(0, 1), "json").toString()) as {
      resourceSpans: { scopeSpans: { spans: { traceId: string }[] }[] }[];
    };
    const span = again.resourceSpans[0]?.scopeSpans[0]?.spans[0];
    if (span) span.traceId = run.traceId;
    await producer.send({ topic: otlpTopic, messages: [{ value: JSON.stringify(again) }] });
    await waitFor(async () => (await counter("reflector_otlp_spans_total", "late")) > lateBefore, {
      what: "the late span to be counted",
    });
  });

  it("dead-letters malformed OTLP records with the reason", async () => {
    const [meta] = await producer.send({
      topic: otlpTopic,
      messages: [
        { key: "bad-json", value: '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "nope"}]}]}]}' },
      ],
    });
    const dead = await waitFor(
      () =>
        h.on(
          h.config.topics.deadLetter,
          (c) => c.key === "bad-json" && c.headers["reflector.original.topic"] === otlpTopic,
        )[0],
      { what: "the dead letter" },
    );
    expect(dead.headers["reflector.error.code"]).toBe("SCHEMA_INVALID");
    expect(dead.headers["reflector.error.message"]).toContain("traceId: must be 32 hex digits");
    expect(dead.headers["reflector.original.offset"]).toBe(meta?.baseOffset);
    expect(dead.headers["reflector.consumer.group"]).toBe(h.config.otlp.groupId);
  });
});

describe("OTLP bridge against a topic that refuses an event", () => {
  it("dead-letters the trace the input topic refuses, publishes the others, and keeps expiring", async () => {
    const admin = h.kafka.admin();
    await admin.connect();
    const setLimit = (bytes: string) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: h.config.topics.taskCompleted,
            configEntries: [{ name: "max.message.bytes", value: bytes }],
          },
        ],
      });
    // The bridge read the topic's limit (1 MB) at start; the broker now takes far less.
    await setLimit("40000");
    try {
      const big = sdkRun(`conv-${id}-big`);
      const small = sdkRun(`conv-${id}-small`);
      const rootless = sdkRun(`conv-${id}-rootless-2`, false);
      // The big trace's user message fills its task (~80 KB of event), the small one is ordinary.
      const record = JSON.parse(serialize(big.spans, "json").toString()) as {
        resourceSpans: {
          scopeSpans: { spans: { parentSpanId?: string; attributes: { key: string; value: unknown }[] }[] }[];
        }[];
      };
      const bigRoot = record.resourceSpans
        .flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
        .find((s) => !s.parentSpanId);
      bigRoot?.attributes.push({
        key: "gen_ai.input.messages",
        value: {
          stringValue: JSON.stringify([
            { role: "user", parts: [{ type: "text", content: "why? ".repeat(20_000) }] },
          ]),
        },
      });
      await producer.send({
        topic: otlpTopic,
        messages: [
          { key: big.run.traceId, value: JSON.stringify(record) },
          { key: small.run.traceId, value: serialize(small.spans, "protobuf") },
          { key: rootless.run.traceId, value: serialize(rootless.spans, "protobuf") },
        ],
      });
      const dead = await waitFor(
        () =>
          h.on(
            h.config.topics.deadLetter,
            (c) => c.headers["reflector.otlp.trace-id"] === big.run.traceId,
          )[0],
        { what: "the refused trace's dead letter", timeoutMs: 60_000 },
      );
      expect(dead.headers["reflector.error.code"]).toBe("OUTPUT_TOO_LARGE");
      expect(dead.headers["reflector.otlp.tenant-id"]).toBe(tenantId);
      await waitFor(() => decisionOf(`conv-${id}-small`), {
        what: "the small trace's decision",
        timeoutMs: 60_000,
      });
      const state = async (traceId: string) =>
        (
          await h.pool.query<{ state: string }>("SELECT state FROM otlp_traces WHERE trace_id = $1", [
            traceId,
          ])
        ).rows[0]?.state;
      expect(await state(big.run.traceId)).toBe("invalid");
      await waitFor(async () => (await state(rootless.run.traceId)) === "expired", {
        what: "the rootless trace to expire",
        timeoutMs: 30_000,
      });
      expect(inputs.some((r) => r.ceId === `otlp-${big.run.traceId}`)).toBe(false);
    } finally {
      await setLimit("1048588");
      await admin.disconnect();
    }
  });
});

const cli = fileURLToPath(new URL("../support/run-cli.ts", import.meta.url));

describe("OTLP bridge across kill -9", () => {
  it("after kill -9 mid-stream and a restart, every trace is published and decided exactly once", async () => {
    const crashTopic = `${id}.otlp_crash`;
    await ensureTopics(h.kafka, { names: [crashTopic], partitions: 3, replicationFactor: 1 });
    const env = cliEnv(h.config, {
      OTLP_TOPIC: crashTopic,
      OTLP_GROUP_ID: `otlp-crash-${id}`,
      OTLP_TRACE_GRACE_MS: "200",
      OTLP_SWEEP_INTERVAL_MS: "50",
      KAFKA_SESSION_TIMEOUT_MS: "6000",
    });
    const start = (): ChildProcess =>
      spawn(process.execPath, ["--import", "tsx", cli, "otlp-bridge"], {
        env,
        stdio: ["ignore", "ignore", "inherit"],
      });

    const traces: { traceId: string; loopId: string }[] = [];
    // Traces keep coming while the first bridge works, until 20 after it was killed: the kill lands
    // mid-stream. One record per span, keyed by trace id as the Collector's partition_traces_by_id does.
    let afterKill = -1;
    const stream = (async () => {
      for (let i = 0; afterKill < 20 && i < 2_000; i += 1) {
        if (afterKill >= 0) afterKill += 1;
        const loopId = `crash-${id}-${String(i)}`;
        const { run, spans } = sdkRun(loopId);
        traces.push({ traceId: run.traceId, loopId });
        await producer.send({
          topic: crashTopic,
          messages: spans.map((span, n) => ({
            key: run.traceId,
            value: serialize([span], n % 2 === 0 ? "protobuf" : "json"),
          })),
        });
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    })();
    const published = async () => {
      const res = await h.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM otlp_traces WHERE trace_id = ANY($1::text[]) AND state = 'published'",
        [traces.map((t) => t.traceId)],
      );
      return Number(res.rows[0]?.n ?? 0);
    };

    const first = start();
    const exited = new Promise((resolve) => first.once("exit", resolve));
    await waitFor(async () => (await published()) >= 5, {
      what: "the first published traces",
      timeoutMs: 60_000,
    });
    first.kill("SIGKILL");
    afterKill = 0;
    await exited;
    const beforeRestart = await published();
    const second = start();
    try {
      await stream;
      const total = traces.length;
      expect(beforeRestart).toBeLessThan(total);
      await waitFor(async () => (await published()) === total, {
        what: `${String(total)} traces published`,
        timeoutMs: 90_000,
      });
      await waitFor(() => traces.every((t) => decisionOf(t.loopId) !== undefined), {
        what: "a decision for every trace",
        timeoutMs: 90_000,
      });
      // Every trace reached the input topic; a re-publish after the kill (the event sent, the
      // kill before Postgres marked it) carries the same event id and the same bytes.
      for (const t of traces) {
        const records = inputs.filter((r) => r.ceId === `otlp-${t.traceId}`);
        expect(records.length, t.traceId).toBeGreaterThanOrEqual(1);
        expect(new Set(records.map((r) => r.raw)).size, t.traceId).toBe(1);
      }
      // The processor has read all of them (its committed offsets reached the end of the input topic)…
      const admin = h.kafka.admin();
      await admin.connect();
      try {
        await waitFor(
          async () => {
            const ends = await admin.fetchTopicOffsets(h.config.topics.taskCompleted);
            const [group] = await admin.fetchOffsets({
              groupId: h.config.kafka.groupId,
              topics: [h.config.topics.taskCompleted],
            });
            return ends.every(
              (end) => group?.partitions.find((p) => p.partition === end.partition)?.offset === end.high,
            );
          },
          { what: "the processor to read the whole input topic", timeoutMs: 60_000 },
        );
      } finally {
        await admin.disconnect();
      }
      // …and decided each trace exactly once: a second record of an event id publishes nothing.
      for (const t of traces) {
        expect(
          h.on(h.config.topics.loopDecision, (c) => c.value?.loopId === t.loopId),
          t.loopId,
        ).toHaveLength(1);
      }
    } finally {
      second.kill("SIGTERM");
      await new Promise((resolve) => second.once("exit", resolve));
    }
  });
});
