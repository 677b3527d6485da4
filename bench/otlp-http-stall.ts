import { loadavg } from "node:os";
import { Registry } from "prom-client";
import type { KafkaClient } from "../src/adapters/kafka/kafka-client.js";
import { loadConfig } from "../src/config/config.js";
import type { ApiRoutesDeps } from "../src/http/api-routes.js";
import { createApiKeyring, parseApiKeys } from "../src/http/api-keys.js";
import { createHttpServer } from "../src/http/http-server.js";
import { buildOtlpHttpIngest } from "../src/composition/otlp-bridge-app.js";
import { withDeadline, type BenchResult } from "./support.js";

/**
 * How long the event loop stops while the largest OTLP/HTTP request taken by default (nearly
 * 4 MiB of OTLP/JSON in 4,000 spans: long texts, and many short attributes) is parsed, with the
 * parsing on `OTLP_HTTP_WORKERS=2` worker threads and on the event loop. The unit tests assert
 * the mechanism (the body is never parsed on the loop's thread with workers); this measures what
 * it buys. The longest gap between the runs of a 1 ms timer, best of `rounds` per shape; Kafka is
 * replaced by a producer that acknowledges at once, so the stall is the parsing's alone.
 */
export async function benchOtlpHttpStall(
  rounds = Number(process.env.BENCH_OTLP_STALL_ROUNDS ?? 3),
): Promise<BenchResult> {
  const shapes = [
    ["long texts", request(4_000, 790)],
    ["many attributes", request(4_000, 4, 13)],
  ] as const;
  return withDeadline("otlp-http-stall", 300_000, async () => {
    const onWorkers = server("2");
    const onLoop = server("0");
    const lines: string[] = [
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    ];
    let worst = 0;
    try {
      // Warm both: the workers' start, the parsers' first run.
      await onWorkers.post(request(10));
      await onLoop.post(request(10));
      for (const [shape, body] of shapes) {
        const workers: number[] = [];
        const loop: number[] = [];
        for (let round = 0; round < rounds; round += 1) {
          workers.push(await longestStall(() => onWorkers.post(body)));
          loop.push(await longestStall(() => onLoop.post(body)));
        }
        const best = (list: number[]) => Math.min(...list);
        worst = Math.max(worst, best(workers));
        lines.push(
          `${shape} (${String(body.length)} bytes, 4,000 spans): event loop stalled ${best(workers).toFixed(0)} ms with 2 workers, ${best(loop).toFixed(0)} ms parsed on the loop (best of ${String(rounds)})`,
        );
      }
    } finally {
      await onWorkers.close();
      await onLoop.close();
    }
    return {
      name: "OTLP/HTTP's largest request: event loop stall with the parsing on worker threads",
      lines,
      ratio: 100 / Math.max(worst, 1),
      goal: "≥ 1 (under 100 ms)",
      met: worst < 100,
    };
  });
}

const acknowledging = {
  producer: () => ({
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    send: () => Promise.resolve([]),
  }),
} as unknown as KafkaClient;
const unused = new Proxy({}, { get: () => () => Promise.reject(new Error("not used")) });

function server(workers: string) {
  const config = loadConfig({
    KAFKA_BROKERS: "localhost:9092",
    DATABASE_URL: "postgres://x@localhost/x",
    OTLP_TOPIC: "otlp.spans",
    OTLP_HTTP_WORKERS: workers,
    OTLP_HTTP_SPANS_PER_MINUTE: "100000000",
    OTLP_HTTP_REQUESTS_PER_MINUTE: "1000000",
    OTLP_NEW_TRACES_PER_MINUTE: "10000000",
  });
  const registry = new Registry();
  const otlp = buildOtlpHttpIngest(config, "otlp.spans", {
    kafka: acknowledging,
    limits: { topicBytes: () => 1_048_588, requestBytes: 100 * 1024 * 1024 },
    registry,
  });
  const app = createHttpServer({
    registry,
    isConsuming: () => true,
    isStopping: () => false,
    dependencies: [],
    api: {
      keys: createApiKeyring(parseApiKeys("stall-bench-key:tenant-a:decide")),
      stores: unused as ApiRoutesDeps["stores"],
      completeLoop: () => Promise.reject(new Error("not used")),
      commonIssues: () => Promise.reject(new Error("not used")),
      clock: { now: () => new Date() },
      otlp: otlp.ingest,
    },
  });
  return {
    async post(payload: string): Promise<void> {
      const res = await app.inject({
        method: "POST",
        url: "/v1/traces",
        payload,
        headers: { authorization: "Bearer stall-bench-key", "content-type": "application/json" },
      });
      if (res.statusCode !== 200)
        throw new Error(`POST /v1/traces answered ${String(res.statusCode)}: ${res.body}`);
    },
    async close(): Promise<void> {
      await app.close();
      await otlp.disconnect();
    },
  };
}

/** The longest the event loop went without running a 1 ms timer while `work` ran. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    await work();
    // A stall that lasted until the work ended was never seen by the timer.
    return Math.max(longest, performance.now() - last);
  } finally {
    clearInterval(ticker);
  }
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** An OTLP/JSON request of `count` spans of one trace, each with `attributes` attributes of `attributeChars` characters. */
function request(count: number, attributeChars = 10, attributes = 1): string {
  const spans = Array.from({ length: count }, (_, i) => ({
    traceId: hex(1, 32),
    spanId: hex(i + 1, 16),
    name: `step ${String(i)}`,
    kind: 1,
    startTimeUnixNano: "1700000000000000000",
    endTimeUnixNano: "1700000001000000000",
    attributes: Array.from({ length: attributes }, (_, a) => ({
      key: `gen_ai.attribute_${String(a)}`,
      value: { stringValue: "x".repeat(attributeChars) },
    })),
  }));
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "agents" } }] },
        scopeSpans: [{ spans }],
      },
    ],
  });
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  const { report } = await import("./support.js");
  report(await benchOtlpHttpStall());
  process.exit(0);
}
