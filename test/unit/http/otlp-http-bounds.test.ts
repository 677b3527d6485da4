import { Registry } from "prom-client";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { KafkaClient } from "../../../src/adapters/kafka/kafka-client.js";
import { loadConfig } from "../../../src/config/config.js";
import type { ApiRoutesDeps } from "../../../src/http/api-routes.js";
import { createApiKeyring, parseApiKeys } from "../../../src/http/api-keys.js";
import { createHttpServer } from "../../../src/http/http-server.js";
import { buildOtlpHttpIngest } from "../../../src/composition/otlp-bridge-app.js";

/**
 * OTLP/HTTP's bounds: the body limit (refused before anything parses it), spans per request,
 * requests per API key and spans per tenant a minute (429 with Retry-After), deep JSON (400), the
 * 503 without the broker's words, and the largest request taken parsed on worker threads, never on
 * the event loop. Nothing here is timed: what the parsing costs the event loop is measured by
 * `npm run bench -- otlp-http-stall`.
 */
const sent: Buffer[] = [];
let kafkaDown = false;
/** How far the servers' clock is ahead of the machine's (a test moves it past a Retry-After). */
let ahead = 0;
const fakeKafka = {
  producer: () => ({
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    send: (record: { messages: { value: Buffer }[] }) => {
      if (kafkaDown)
        return Promise.reject(
          new Error("Connection error: connect ECONNREFUSED 10.1.2.3:9092 (broker kafka-internal-3)"),
        );
      for (const m of record.messages) sent.push(m.value);
      return Promise.resolve([]);
    },
  }),
} as unknown as KafkaClient;

const unused = new Proxy({}, { get: () => () => Promise.reject(new Error("not used")) });
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

function server(env: Record<string, string> = {}) {
  const config = loadConfig({
    KAFKA_BROKERS: "localhost:9092",
    DATABASE_URL: "postgres://x@localhost/x",
    OTLP_TOPIC: "otlp.spans",
    // Parsed on the event loop unless a test is about the worker threads: starting them (tsx
    // compiling the worker) is the slowest thing here and tells the bounds' tests nothing.
    OTLP_HTTP_WORKERS: "0",
    ...env,
  });
  const registry = new Registry();
  const otlp = buildOtlpHttpIngest(config, "otlp.spans", {
    kafka: fakeKafka,
    limits: { topicBytes: () => 1_048_588, requestBytes: 100 * 1024 * 1024 },
    registry,
  });
  const app = createHttpServer({
    registry,
    isConsuming: () => true,
    isStopping: () => false,
    dependencies: [],
    api: {
      keys: createApiKeyring(
        parseApiKeys(
          "bounds-key-a1:tenant-a:decide,bounds-key-a2:tenant-a:decide,bounds-key-b:tenant-b:decide",
        ),
      ),
      stores: unused as ApiRoutesDeps["stores"],
      completeLoop: () => Promise.reject(new Error("not used")),
      commonIssues: () => Promise.reject(new Error("not used")),
      clock: { now: () => new Date(Date.now() + ahead) },
      otlp: otlp.ingest,
    },
  });
  closers.push(async () => {
    await app.close();
    await otlp.disconnect();
  });
  const post = (payload: string, key = "bounds-key-a1") =>
    app.inject({
      method: "POST",
      url: "/v1/traces",
      payload,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    });
  return { config, post, ingest: otlp.ingest };
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/**
 * An OTLP/JSON request of `count` spans of one trace, each with `attributes` attributes of
 * `attributeChars` characters.
 */
function request(count: number, attributeChars = 10, attributes = 1, traces = 1, firstTrace = 1): string {
  const spans = Array.from({ length: count }, (_, i) => ({
    traceId: hex(firstTrace + (i % traces), 32),
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

describe("OTLP/HTTP's bounds", () => {
  it("takes at most 4 MiB a request by default", () => {
    const { config, ingest } = server();
    expect(config.otlp.http.maxBodyBytes).toBe(4 * 1024 * 1024);
    expect(ingest.maxBodyBytes).toBe(4 * 1024 * 1024);
  });

  it("answers 413 for a request with more spans than one may hold, and sends nothing", async () => {
    const { post } = server({ OTLP_HTTP_MAX_SPANS: "10" });
    sent.length = 0;
    expect((await post(request(10))).statusCode).toBe(200);
    const res = await post(request(11));
    expect(res.statusCode).toBe(413);
    expect(res.body).toContain("11 spans");
    expect(sent).toHaveLength(1);
  });

  it("answers 429 with Retry-After to a key over its requests a minute, and not to another key", async () => {
    const { post } = server({ OTLP_HTTP_REQUESTS_PER_MINUTE: "2" });
    expect((await post(request(1))).statusCode).toBe(200);
    expect((await post(request(1))).statusCode).toBe(200);
    const limited = await post(request(1));
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await post(request(1), "bounds-key-b")).statusCode).toBe(200);
  });

  it("answers 429 with Retry-After to a tenant over its spans a minute, whichever of its keys sends", async () => {
    const { post } = server({ OTLP_HTTP_SPANS_PER_MINUTE: "100" });
    sent.length = 0;
    expect((await post(request(60), "bounds-key-a1")).statusCode).toBe(200);
    const limited = await post(request(60), "bounds-key-a2");
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await post(request(60), "bounds-key-b")).statusCode).toBe(200);
    expect(sent).toHaveLength(2);
  });

  it("answers 429 to a tenant over its new traces a minute; a known trace's later spans are not new", async () => {
    const { post } = server({ OTLP_NEW_TRACES_PER_MINUTE: "10" });
    sent.length = 0;
    expect((await post(request(8, 10, 1, 8), "bounds-key-a1")).statusCode).toBe(200);
    const limited = await post(request(3, 10, 1, 3, 9), "bounds-key-a2");
    expect(limited.statusCode).toBe(429);
    expect(limited.body).toContain("new traces a minute");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // Once its Retry-After has passed, the eight known traces and two new ones fit.
    ahead += Number(limited.headers["retry-after"]) * 1000;
    expect((await post(request(10, 10, 1, 10), "bounds-key-a1")).statusCode).toBe(200);
    expect((await post(request(3, 10, 1, 3, 9), "bounds-key-b")).statusCode).toBe(200);
    expect(sent).toHaveLength(3);
  });

  it("refuses a tenant over its volume unread until its Retry-After, whichever of its keys sends; another tenant is read", async () => {
    const { post } = server({ OTLP_NEW_TRACES_PER_MINUTE: "10" });
    expect((await post(request(10, 10, 1, 10), "bounds-key-a1")).statusCode).toBe(200);
    const limited = await post(request(1, 10, 1, 1, 50), "bounds-key-a1");
    expect(limited.statusCode).toBe(429);
    const retryAfter = Number(limited.headers["retry-after"]);
    // Not JSON at all: read, it would be answered 400. Refused unread, it is answered 429.
    const unread = await post("this is not an OTLP export", "bounds-key-a2");
    expect(unread.statusCode).toBe(429);
    expect(Number(unread.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(unread.headers["retry-after"])).toBeLessThanOrEqual(retryAfter);
    expect(unread.body).toContain("new traces a minute");
    expect((await post("this is not an OTLP export", "bounds-key-b")).statusCode).toBe(400);
    ahead += retryAfter * 1000;
    expect((await post("this is not an OTLP export", "bounds-key-a2")).statusCode).toBe(400);
  });

  it("answers 400, not 500, to JSON nested deeper than any OTLP export", async () => {
    const { post } = server();
    const deep = `{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":${'{"arrayValue":{"values":['.repeat(20_000)}{"stringValue":"x"}${"]}}".repeat(20_000)}}]},"scopeSpans":[]}]}`;
    const res = await post(deep);
    expect(res.statusCode).toBe(400);
    const deepArrays = `{"resourceSpans":${"[".repeat(500_000)}${"]".repeat(500_000)}}`;
    expect((await post(deepArrays)).statusCode).toBe(400);
  });

  it("answers 503 without the broker's own words", async () => {
    const { post } = server();
    kafkaDown = true;
    try {
      const res = await post(request(1));
      expect(res.statusCode).toBe(503);
      expect(res.body).not.toMatch(/ECONNREFUSED|10\.1\.2\.3|kafka-internal/);
    } finally {
      kafkaDown = false;
    }
  });
});

/** Runs `work` while counting the calls to `JSON.parse` on this thread whose text is `body`. */
async function parsesOfBody(body: string, work: () => Promise<unknown>): Promise<number> {
  const parse = vi.spyOn(JSON, "parse");
  try {
    await work();
    return parse.mock.calls.filter(([text]) => text === body).length;
  } finally {
    parse.mockRestore();
  }
}

describe("OTLP/HTTP's body limit", () => {
  it("refuses a body over OTLP_HTTP_MAX_BODY_BYTES with 413 before anything parses it", async () => {
    const { post } = server({ OTLP_HTTP_MAX_BODY_BYTES: "65536" });
    sent.length = 0;
    const fits = request(40, 100);
    const over = request(400, 100);
    expect(fits.length).toBeLessThan(65_536);
    expect(over.length).toBeGreaterThan(65_536);
    let status = 0;
    expect(
      await parsesOfBody(over, async () => {
        status = (await post(over)).statusCode;
      }),
    ).toBe(0);
    expect(status).toBe(413);
    // The same route parses a body within the limit (the spy sees what it would have).
    expect(
      await parsesOfBody(fits, async () => {
        status = (await post(fits)).statusCode;
      }),
    ).toBe(1);
    expect(status).toBe(200);
    expect(sent).toHaveLength(1);
  });
});

// Starting worker threads that load the TypeScript worker through tsx can take seconds on a busy
// machine: the timeout only guards a hang, nothing is measured against it.
describe("the largest OTLP/HTTP request", { timeout: 60_000 }, () => {
  // Nearly 4 MiB of OTLP/JSON in 4,000 spans, the largest request taken by default: long texts,
  // and many short attributes (the costlier shape to parse and validate).
  const shapes = [
    ["long texts", request(4_000, 790)],
    ["many attributes", request(4_000, 4, 13)],
  ] as const;

  it.each(shapes)(
    "is parsed on the worker threads, not on the event loop, into the records parsing on the loop gives (%s)",
    async (_shape, largest) => {
      expect(largest.length).toBeGreaterThan(3.7 * 1024 * 1024);
      expect(largest.length).toBeLessThan(4 * 1024 * 1024);
      const onWorkers = server({ OTLP_HTTP_WORKERS: "2", OTLP_HTTP_SPANS_PER_MINUTE: "1000000" });
      const onLoop = server({ OTLP_HTTP_WORKERS: "0", OTLP_HTTP_SPANS_PER_MINUTE: "1000000" });
      let status = 0;
      sent.length = 0;
      const onThisThread = await parsesOfBody(largest, async () => {
        status = (await onWorkers.post(largest)).statusCode;
      });
      expect(status).toBe(200);
      expect(onThisThread, "parses of the body on the event loop's thread, with workers").toBe(0);
      const fromWorkers = sent.splice(0);
      expect(
        await parsesOfBody(largest, async () => {
          status = (await onLoop.post(largest)).statusCode;
        }),
        "parses of the body on the event loop's thread, without workers",
      ).toBe(1);
      expect(status).toBe(200);
      const fromLoop = sent.splice(0);
      expect(fromWorkers.length).toBeGreaterThan(1);
      expect(fromWorkers.map((record) => record.toString("base64"))).toEqual(
        fromLoop.map((record) => record.toString("base64")),
      );
    },
  );
});
