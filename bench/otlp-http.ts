import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { createKafka } from "../src/adapters/kafka/kafka-client.js";
import { ensureTopics } from "../src/adapters/kafka/topics.js";
import { loadConfig } from "../src/config/config.js";
import type { ApiRoutesDeps } from "../src/http/api-routes.js";
import { createApiKeyring, parseApiKeys } from "../src/http/api-keys.js";
import { createHttpServer } from "../src/http/http-server.js";
import { buildOtlpHttpIngest } from "../src/composition/otlp-bridge-app.js";
import { runMultiAgentTask, sdkTracer, serialize, type OtlpEncoding } from "../test/support/otel-traces.js";
import { brokers, databaseUrl, silentLogger, withDeadline, type BenchResult } from "./support.js";

/**
 * Spans per second accepted by `POST /v1/traces` (issue 26's goal: 5,000): the HTTP server with the
 * API's authentication and the real OTLP ingest (validate, stamp the key's tenant, produce to a
 * 6-partition OTLP topic on the local Kafka, acknowledged by the brokers before each 200), fed by
 * `BENCH_OTLP_HTTP_SENDERS` concurrent clients in this process, each posting requests of
 * `BENCH_OTLP_HTTP_SPANS` SDK spans (the multi-agent run of the tests, 5 spans per trace; an SDK's
 * batch processor exports up to 512) as its OTLP/HTTP exporter serializes them. The records
 * produced are counted on the topic afterwards: every accepted request is there. That nothing
 * accepted is lost through a restart of Reflector and its bridge is shown by
 * test/integration/otlp-http.test.ts.
 */
export async function benchOtlpHttp(
  spansPerRequest = Number(process.env.BENCH_OTLP_HTTP_SPANS ?? 500),
  requests = Number(process.env.BENCH_OTLP_HTTP_REQUESTS ?? 200),
  senders = Number(process.env.BENCH_OTLP_HTTP_SENDERS ?? 8),
): Promise<BenchResult> {
  const id = randomUUID().slice(0, 6);
  const topic = `bench.otlp-http-${id}.spans`;
  const config = loadConfig({
    KAFKA_BROKERS: brokers,
    DATABASE_URL: databaseUrl,
    KAFKA_CLIENT_ID: `bench-otlp-http-${id}`,
    OTLP_TOPIC: topic,
    LOG_LEVEL: "silent",
  });
  const kafka = createKafka({
    connection: config.kafka,
    clientId: `bench-otlp-http-${id}`,
    logger: silentLogger,
  });
  await ensureTopics(kafka, { names: [topic], partitions: 6, replicationFactor: 1 });
  const registry = new Registry();
  const otlp = buildOtlpHttpIngest(config, topic, {
    kafka,
    limits: { topicBytes: () => 1_048_588, requestBytes: config.consumer.maxRequestBytes },
    registry,
  });
  const unused = new Proxy({}, { get: () => () => Promise.reject(new Error("not used")) });
  const key = `bench-otlp-http-${id}`;
  const app = createHttpServer({
    registry,
    isConsuming: () => true,
    isStopping: () => false,
    dependencies: [],
    api: {
      keys: createApiKeyring(parseApiKeys(`${key}:bench-tenant:decide`)),
      stores: unused as ApiRoutesDeps["stores"],
      completeLoop: () => Promise.reject(new Error("not used")),
      commonIssues: () => Promise.reject(new Error("not used")),
      clock: { now: () => new Date() },
      otlp: otlp.ingest,
    },
  });
  await otlp.connect();
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${String((app.server.address() as AddressInfo).port)}/v1/traces`;
  try {
    return await withDeadline("otlp-http", 300_000, async () => {
      const lines: string[] = [];
      const rates: number[] = [];
      for (const encoding of ["protobuf", "json"] as const) {
        const body = requestOf(encoding, spansPerRequest);
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        let next = 0;
        const failures: string[] = [];
        await Promise.all(
          Array.from({ length: senders }, async () => {
            while (next < requests) {
              next += 1;
              const res = await fetch(url, {
                method: "POST",
                headers: { authorization: `Bearer ${key}`, "content-type": contentType[encoding] },
                body,
              });
              await res.arrayBuffer();
              if (res.status !== 200) failures.push(`${String(res.status)} ${await res.text()}`);
            }
          }),
        );
        const seconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        if (failures.length > 0)
          throw new Error(`${String(failures.length)} requests failed: ${failures[0] ?? ""}`);
        const spans = spansPerRequest * requests;
        const rate = spans / seconds;
        rates.push(rate);
        lines.push(
          `${encoding.padEnd(8)} ${String(requests)} requests of ${String(spansPerRequest)} spans (${(body.length / 1024).toFixed(0)} KiB each), ${String(senders)} senders: ${rate.toFixed(0)} spans/s, ${(requests / seconds).toFixed(0)} requests/s; ${(spans / ((cpu.user + cpu.system) / 1e6)).toFixed(0)} spans per CPU-second of the process (server and clients)`,
        );
      }
      const admin = kafka.admin();
      await admin.connect();
      const offsets = await admin.fetchTopicOffsets(topic);
      await admin.disconnect();
      const records = offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0);
      lines.push(
        `records on the OTLP topic afterwards: ${String(records)} (requests answered 200: ${String(2 * requests)})`,
      );
      if (records < 2 * requests)
        throw new Error(`only ${String(records)} records for ${String(2 * requests)} accepted requests`);
      // The machine is shared: the spans per CPU-second say what one core does whatever the load.
      lines.push(
        `load average at the end (1, 5, 15 min): ${loadavg()
          .map((l) => l.toFixed(1))
          .join(", ")}`,
      );
      const lowest = Math.min(...rates);
      return {
        name: "OTLP/HTTP ingest (POST /v1/traces → validated, tenant stamped, acked by Kafka)",
        lines,
        ratio: lowest / 5_000,
        goal: "≥ 1 (5,000 spans/s in both encodings)",
        met: lowest >= 5_000,
      };
    });
  } finally {
    await app.close();
    await otlp.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}

const contentType: Record<OtlpEncoding, string> = {
  protobuf: "application/x-protobuf",
  json: "application/json",
};

/** One export request of about `spans` SDK spans (whole runs of 5 spans). */
function requestOf(encoding: OtlpEncoding, spans: number): Buffer {
  const sdk = sdkTracer({ "service.name": "bench-agents" });
  const start = Date.now();
  for (let i = 0; i < Math.ceil(spans / 5); i += 1)
    runMultiAgentTask(sdk.tracer, { startMs: start + i * 100 });
  return serialize(sdk.finished().slice(0, spans), encoding);
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  const { report } = await import("./support.js");
  report(await benchOtlpHttp());
}
