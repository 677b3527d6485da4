import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOtlpBridgeApp } from "../../src/composition/otlp-bridge-app.js";
import { loadConfig } from "../../src/config/config.js";
import { createLogger } from "../../src/observability/logger.js";
import { startHarness, type Harness } from "../support/harness.js";
import { runMultiAgentTask, sdkTracer, serialize } from "../support/otel-traces.js";
import { waitFor } from "../support/wait-for.js";

/**
 * `reflector otlp-bridge` alone, against the real Kafka, Postgres and Redis: its health, readiness
 * and metrics on its HTTP port, as the chart's probes and PodMonitor read them.
 */
let h: Harness;
let producer: Producer;
const id = randomUUID().slice(0, 8);
const otlpTopic = () => `${id}.otlp_spans`;

beforeAll(async () => {
  // The harness makes its topics, the OTLP topic among them; no processor runs.
  h = await startHarness({ startApp: false, env: { OTLP_TOPIC: otlpTopic() } });
  producer = h.kafka.producer();
  await producer.connect();
});

afterAll(async () => {
  await producer.disconnect();
  await h.close();
});

/** A standalone bridge from the harness's settings and `env`, on a port of its own. */
function bridgeApp(env: Record<string, string> = {}) {
  const c = h.config;
  const config = loadConfig({
    KAFKA_BROKERS: c.kafka.brokers.join(","),
    KAFKA_GROUP_ID: c.kafka.groupId,
    DATABASE_URL: c.databaseUrl,
    REDIS_URL: c.redis.url,
    REDIS_KEY_PREFIX: c.redis.keyPrefix,
    TOPIC_TASK_COMPLETED: c.topics.taskCompleted,
    TOPIC_DLQ: c.topics.deadLetter,
    OTLP_TOPIC: otlpTopic(),
    OTLP_TRACE_GRACE_MS: "200",
    OTLP_SWEEP_INTERVAL_MS: "100",
    HTTP_HOST: "127.0.0.1",
    HTTP_PORT: "0",
    ...env,
  });
  const app = createOtlpBridgeApp(config, createLogger("silent"));
  const url = (path: string) =>
    `http://127.0.0.1:${String((app.http.server.address() as AddressInfo).port)}${path}`;
  const readiness = async () => {
    const res = await fetch(url("/readyz"));
    return { status: res.status, body: (await res.json()) as { checks: Record<string, boolean> } };
  };
  return { app, url, readiness };
}

describe("the standalone OTLP bridge's HTTP listener", () => {
  it("is alive, ready once its consumer is in its group and every dependency answers, and serves its metrics", async () => {
    const { app, url, readiness } = bridgeApp();
    await app.start();
    const healthz = url("/healthz");
    try {
      expect((await fetch(healthz)).status).toBe(200);
      const ready = await waitFor(
        async () => {
          const r = await readiness();
          return r.status === 200 ? r : undefined;
        },
        { what: "the bridge ready", timeoutMs: 60_000 },
      );
      expect(ready.body.checks).toEqual({
        consumer: true,
        stopping: true,
        kafka: true,
        postgres: true,
        redis: true,
      });

      // A record bridged: its count is on /metrics, with the bridge's readiness and its own requests.
      const sdk = sdkTracer({ "service.name": "churn-agents", "reflector.tenant_id": `tenant-${id}` });
      const run = runMultiAgentTask(sdk.tracer, { conversationId: `conv-${id}` });
      await producer.send({
        topic: otlpTopic(),
        messages: [{ key: run.traceId, value: serialize(sdk.finished(), "protobuf") }],
      });
      const metrics = await waitFor(
        async () => {
          const res = await fetch(url("/metrics"));
          const text = await res.text();
          return text.includes('reflector_otlp_records_total{encoding="protobuf",result="ok"} 1')
            ? { text, type: res.headers.get("content-type") }
            : undefined;
        },
        { what: "the bridged record on /metrics", timeoutMs: 60_000 },
      );
      expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(metrics.text).toMatch(/^reflector_ready 1$/m);
      expect(metrics.text).toMatch(
        /^reflector_http_request_duration_seconds_count\{method="GET",route="\/readyz",status="200"\} [1-9]/m,
      );
      expect(metrics.text).toMatch(/^process_cpu_seconds_total /m);
    } finally {
      await app.stop();
    }
    // Stopped: the listener is closed with the rest.
    await expect(fetch(healthz)).rejects.toThrow();
  });

  it("is not ready while a dependency is away, and says which", async () => {
    // Nothing listens on port 1: Redis, where the bridge counts new traces, does not answer.
    const { app, readiness } = bridgeApp({
      KAFKA_GROUP_ID: `${h.config.kafka.groupId}-no-redis`,
      REDIS_URL: "redis://127.0.0.1:1/0",
    });
    await app.start();
    try {
      const notReady = await waitFor(
        async () => {
          const r = await readiness();
          return r.body.checks.consumer ? r : undefined;
        },
        { what: "the consumer in its group", timeoutMs: 60_000 },
      );
      expect(notReady.status).toBe(503);
      expect(notReady.body.checks).toMatchObject({
        consumer: true,
        kafka: true,
        postgres: true,
        redis: false,
      });
    } finally {
      await app.stop();
    }
  });
});
