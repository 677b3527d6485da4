import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Consumer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopDecisionV1, TaskCompletedV1, type TaskCompleted } from "../../src/domain/contracts/index.js";
import { startHarness, type Harness } from "../support/harness.js";
import { runMultiAgentTask } from "../support/otel-traces.js";
import { waitFor } from "../support/wait-for.js";

/**
 * OTLP over HTTP end to end: the OpenTelemetry SDK's own OTLP/HTTP exporters (protobuf and JSON)
 * pointed at POST /v1/traces with an API key, through the real OTLP topic and bridge, to a task
 * event under the key's tenant and a loop decision; and accepted requests survive a restart.
 */
const id = randomUUID().slice(0, 8);
const tenantId = `tenant-${id}`;
const apiKey = `otlp-http-key-${id}`;
let h: Harness;
let inputReader: Consumer;
const inputs: TaskCompleted[] = [];

beforeAll(async () => {
  h = await startHarness({
    env: {
      OTLP_TOPIC: `${id}.otlp_spans`,
      OTLP_TRACE_GRACE_MS: "300",
      OTLP_TRACE_TIMEOUT_MS: "3000",
      OTLP_SWEEP_INTERVAL_MS: "100",
      API_KEYS: `${apiKey}:${tenantId}:read+decide`,
    },
  });
  inputReader = h.kafka.consumer({ groupId: `input-reader-${id}` });
  await inputReader.connect();
  await inputReader.subscribe({ topic: h.config.topics.taskCompleted, fromBeginning: true });
  await inputReader.run({
    eachMessage: ({ message }) => {
      inputs.push(JSON.parse(message.value?.toString() ?? "null") as TaskCompleted);
      return Promise.resolve();
    },
  });
});

afterAll(async () => {
  await inputReader.disconnect();
  await h.close();
});

function endpoint(): string {
  const address = h.app.http.server.address() as AddressInfo;
  return `http://127.0.0.1:${String(address.port)}/v1/traces`;
}

/** An SDK tracer whose spans leave through a real OTLP/HTTP exporter, batched as in production. */
function exportingTracer(exporter: SpanExporter) {
  // The resource names another service and no tenant: the tenant is the API key's.
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "churn-agents" }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 50 })],
  });
  return { tracer: provider.getTracer("otlp-http-test"), provider };
}

const headers = () => ({ Authorization: `Bearer ${apiKey}` });
const exporters = {
  protobuf: () => new ProtoExporter({ url: endpoint(), headers: headers() }),
  json: () => new JsonExporter({ url: endpoint(), headers: headers() }),
};

const decisionOf = (loopId: string) =>
  h.on(h.config.topics.loopDecision, (c) => c.value?.loopId === loopId)[0]?.value;

describe("OTLP over HTTP", () => {
  it.each(["protobuf", "json"] as const)(
    "the SDK's %s exporter's spans become one task event of the key's tenant and a loop decision",
    async (encoding) => {
      const { tracer, provider } = exportingTracer(exporters[encoding]());
      const conversationId = `conv-${id}-${encoding}`;
      const run = runMultiAgentTask(tracer, { conversationId, startMs: Date.now() });
      await provider.forceFlush();
      await provider.shutdown();

      const decision = await waitFor(() => decisionOf(conversationId), {
        what: "the loop decision",
        timeoutMs: 60_000,
      });
      expect(LoopDecisionV1.parse(decision)).toMatchObject({
        tenantId,
        loopId: conversationId,
        sourceEventId: `otlp-${run.traceId}`,
      });
      const event = await waitFor(() => inputs.find((e) => e.eventId === `otlp-${run.traceId}`), {
        what: "the task event",
      });
      expect(TaskCompletedV1.parse(event)).toMatchObject({
        tenantId,
        projectId: "churn-agents",
        agentId: "orchestrator",
        outcome: "failure",
        error: { category: "tool_error", type: "query_timeout" },
      });
    },
  );

  it("loses nothing accepted when Reflector (and its bridge) restarts right after the 200s", async () => {
    const { tracer, provider } = exportingTracer(exporters.protobuf());
    const conversations = Array.from({ length: 12 }, (_, i) => `restart-${id}-${String(i)}`);
    for (const [i, conversationId] of conversations.entries()) {
      runMultiAgentTask(tracer, { conversationId, startMs: Date.now() + i * 1_000 });
    }
    await provider.forceFlush();
    await provider.shutdown();
    // Every request was acknowledged by Kafka before its 200: stop at once, before the bridge read them all.
    await h.stopApp();
    await h.startApp();
    for (const conversationId of conversations) {
      const decision = await waitFor(() => decisionOf(conversationId), {
        what: `the decision of ${conversationId}`,
        timeoutMs: 60_000,
      });
      expect(decision).toMatchObject({ tenantId, loopId: conversationId });
    }
    // One decision each: a record read twice stores its spans once.
    for (const conversationId of conversations) {
      expect(h.on(h.config.topics.loopDecision, (c) => c.value?.loopId === conversationId)).toHaveLength(1);
    }
  });

  it("is ready only once the bridge it runs is in its group and can publish (/readyz says otlp_bridge)", async () => {
    const address = h.app.http.server.address() as AddressInfo;
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${String(address.port)}/readyz`);
      return { status: res.status, body: (await res.json()) as { checks: Record<string, boolean> } };
    };
    const ready = await waitFor(async () => {
      const r = await readyz();
      return r.status === 200 ? r : undefined;
    });
    expect(ready.body.checks).toMatchObject({ otlp_bridge: true, consumer: true });
  });

  it("refuses a request without a key, and a resource naming another tenant", async () => {
    const unauthenticated = await fetch(endpoint(), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unauthenticated.status).toBe(401);
    const other = await fetch(endpoint(), {
      method: "POST",
      headers: { "content-type": "application/json", ...headers() },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: {
              attributes: [{ key: "reflector.tenant_id", value: { stringValue: "someone-else" } }],
            },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: "0af7651916cd43dd8448eb211c80319c",
                    spanId: "b7ad6b7169203331",
                    name: "invoke_agent x",
                    startTimeUnixNano: "1764158400000000000",
                    endTimeUnixNano: "1764158401000000000",
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(other.status).toBe(403);
  });
});
