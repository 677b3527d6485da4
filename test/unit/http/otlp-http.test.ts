import { gzipSync } from "node:zlib";
import type { KafkaClient } from "../../../src/adapters/kafka/kafka-client.js";
import { Registry } from "prom-client";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { createOtlpDecoder } from "../../../src/adapters/otlp/otlp-decoder.js";
import { loadConfig } from "../../../src/config/config.js";
import type { ApiRoutesDeps } from "../../../src/http/api-routes.js";
import { createApiKeyring, parseApiKeys } from "../../../src/http/api-keys.js";
import { createHttpServer } from "../../../src/http/http-server.js";
import { decodeStatus, rpcCodeOf, type OtlpStatus } from "../../../src/http/otlp-status.js";
import { buildOtlpHttpIngest } from "../../../src/composition/otlp-bridge-app.js";
import { runMultiAgentTask, sdkTracer, serialize } from "../../support/otel-traces.js";

/**
 * POST /v1/traces with the real validation and tenant stamping, and a producer that records what
 * it was asked to send (the real Kafka path is test/integration/otlp-http.test.ts).
 */
const sent: { topic: string; key: string; value: Buffer }[] = [];
let kafkaDown = false;
let topicBytes = 1_048_588;
const fakeKafka = {
  producer: () => ({
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    send: (record: { topic: string; messages: { key: string; value: Buffer }[] }) => {
      if (kafkaDown)
        return Promise.reject(new Error("Connection error: connect ECONNREFUSED 127.0.0.1:9092"));
      for (const m of record.messages) sent.push({ topic: record.topic, key: m.key, value: m.value });
      return Promise.resolve([]);
    },
  }),
} as unknown as KafkaClient;

const config = loadConfig({
  KAFKA_BROKERS: "localhost:9092",
  DATABASE_URL: "postgres://x@localhost/x",
  OTLP_TOPIC: "otlp.spans",
});
const registry = new Registry();
const otlp = buildOtlpHttpIngest(config, "otlp.spans", {
  kafka: fakeKafka,
  limits: { topicBytes: () => topicBytes, requestBytes: 100 * 1024 * 1024 },
  registry,
});
const unused = new Proxy({}, { get: () => () => Promise.reject(new Error("not used")) });
const app = createHttpServer({
  registry,
  isConsuming: () => true,
  isStopping: () => false,
  dependencies: [],
  api: {
    keys: createApiKeyring(parseApiKeys("otlp-unit-key:tenant-a:decide,read-only-key:tenant-a")),
    stores: unused as ApiRoutesDeps["stores"],
    completeLoop: () => Promise.reject(new Error("not used")),
    commonIssues: () => Promise.reject(new Error("not used")),
    clock: { now: () => new Date() },
    otlp: { ...otlp.ingest, maxBodyBytes: 64 * 1024 },
  },
});
afterAll(async () => {
  await app.close();
});
beforeEach(() => {
  sent.length = 0;
  kafkaDown = false;
  topicBytes = 1_048_588;
});

function sdkRequest(resource: Record<string, string> = { "service.name": "churn-agents" }) {
  const sdk = sdkTracer(resource);
  const run = runMultiAgentTask(sdk.tracer);
  return { run, spans: sdk.finished() };
}

/** An error answer's `google.rpc.Status`, read in the encoding its content type names. */
function statusOf(res: { headers: Record<string, unknown>; rawPayload: Buffer; json: () => unknown }): {
  encoding: "protobuf" | "json";
  status: OtlpStatus;
} {
  const type = String(res.headers["content-type"]);
  if (type === "application/x-protobuf")
    return { encoding: "protobuf", status: decodeStatus(res.rawPayload) };
  expect(type).toMatch(/^application\/json/);
  const body = res.json() as OtlpStatus;
  // The proto3 JSON form of a Status: no field it does not have.
  expect(Object.keys(body).sort()).toEqual(["code", "message"]);
  return { encoding: "json", status: body };
}

const post = (payload: Buffer | string, headers: Record<string, string>) =>
  app.inject({
    method: "POST",
    url: "/v1/traces",
    payload,
    headers: { authorization: "Bearer otlp-unit-key", ...headers },
  });
const decoder = createOtlpDecoder();
const tenantsOf = (value: Buffer) =>
  decoder.decode(value).spans.map((span) => span.resource["reflector.tenant_id"]);

describe("POST /v1/traces", () => {
  it("takes the SDK's protobuf export, stamps the key's tenant on it and answers an empty protobuf response", async () => {
    const { run, spans } = sdkRequest();
    const res = await post(serialize(spans, "protobuf"), { "content-type": "application/x-protobuf" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
    expect(res.rawPayload).toHaveLength(0);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ topic: "otlp.spans", key: run.traceId });
    const decoded = decoder.decode(sent[0]?.value ?? Buffer.alloc(0));
    expect(decoded.encoding).toBe("protobuf");
    expect(decoded.spans).toHaveLength(spans.length);
    expect(new Set(tenantsOf(sent[0]?.value ?? Buffer.alloc(0)))).toEqual(new Set(["tenant-a"]));
    expect(decoded.spans[0]?.resource["service.name"]).toBe("churn-agents");
  });

  it("takes OTLP/JSON, gzip'd or not, and answers {}", async () => {
    const { spans } = sdkRequest();
    const json = serialize(spans, "json");
    const plain = await post(json, { "content-type": "application/json; charset=utf-8" });
    expect(plain.statusCode).toBe(200);
    expect(plain.json()).toEqual({});
    const zipped = await post(gzipSync(json), {
      "content-type": "application/json",
      "content-encoding": "gzip",
    });
    expect(zipped.statusCode).toBe(200);
    expect(sent).toHaveLength(2);
    for (const record of sent) {
      expect(decoder.decode(record.value).encoding).toBe("json");
      expect(new Set(tenantsOf(record.value))).toEqual(new Set(["tenant-a"]));
    }
  });

  it("keeps a resource that names the key's own tenant, refuses one naming another (403)", async () => {
    const own = sdkRequest({ "service.name": "s", "reflector.tenant_id": "tenant-a" });
    const same = await post(serialize(own.spans, "protobuf"), { "content-type": "application/x-protobuf" });
    expect(same.statusCode).toBe(200);
    const other = sdkRequest({ "service.name": "s", "reflector.tenant_id": "tenant-b" });
    const res = await post(serialize(other.spans, "json"), { "content-type": "application/json" });
    expect(res.statusCode).toBe(403);
    expect(statusOf(res)).toEqual({
      encoding: "json",
      status: { code: 7, message: expect.stringContaining("tenant-b") as string },
    });
    const proto = await post(serialize(other.spans, "protobuf"), {
      "content-type": "application/x-protobuf",
    });
    expect(proto.statusCode).toBe(403);
    expect(statusOf(proto)).toEqual({
      encoding: "protobuf",
      status: { code: 7, message: expect.stringContaining("tenant-b") as string },
    });
    expect(sent).toHaveLength(1);
  });

  it("answers 400 with the reason for bodies that are not OTLP, and sends nothing", async () => {
    const cases: [Buffer | string, Record<string, string>, RegExp][] = [
      ["{not json", { "content-type": "application/json" }, /not valid JSON/],
      [
        Buffer.from([0xff, 0xff, 0xff, 0x01]),
        { "content-type": "application/x-protobuf" },
        /ExportTraceServiceRequest/,
      ],
      [
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}',
        { "content-type": "application/json" },
        /hex/,
      ],
      [Buffer.from("not gzip"), { "content-type": "application/json", "content-encoding": "gzip" }, /gzip/],
      ['{"resourceSpans":[]}', { "content-type": "application/x-protobuf" }, /application\/json/],
    ];
    for (const [payload, headers, message] of cases) {
      const res = await post(payload, headers);
      expect(res.statusCode, String(payload)).toBe(400);
      const { encoding, status } = statusOf(res);
      // Answered in the request's encoding, with INVALID_ARGUMENT.
      expect(encoding).toBe(headers["content-type"] === "application/json" ? "json" : "protobuf");
      expect(status.code).toBe(3);
      expect(status.message).toMatch(message);
    }
    expect(sent).toHaveLength(0);
  });

  it("answers 413 with the limit for a body over it, gzip'd or not", async () => {
    const big = JSON.stringify({ resourceSpans: [], padding: "x".repeat(70 * 1024) });
    const res = await post(big, { "content-type": "application/json" });
    expect(res.statusCode).toBe(413);
    expect(statusOf(res).status).toEqual({
      code: 8,
      message: expect.stringContaining(String(64 * 1024)) as string,
    });
    const zipped = await post(gzipSync(big), {
      "content-type": "application/json",
      "content-encoding": "gzip",
    });
    expect(zipped.statusCode).toBe(413);
    expect(sent).toHaveLength(0);
  });

  it("answers 415 for another content type or encoding", async () => {
    const text = await post("spans", { "content-type": "text/plain" });
    expect(text.statusCode).toBe(415);
    // Neither OTLP encoding: the JSON form.
    expect(statusOf(text)).toMatchObject({ encoding: "json", status: { code: 3 } });
    const { spans } = sdkRequest();
    const br = await post(serialize(spans, "protobuf"), {
      "content-type": "application/x-protobuf",
      "content-encoding": "br",
    });
    expect(br.statusCode).toBe(415);
    expect(statusOf(br)).toEqual({
      encoding: "protobuf",
      status: { code: 3, message: expect.stringMatching(/gzip/) as string },
    });
  });

  it("needs a key with the decide role", async () => {
    const { spans } = sdkRequest();
    const body = serialize(spans, "protobuf");
    const none = await app.inject({
      method: "POST",
      url: "/v1/traces",
      payload: body,
      headers: { "content-type": "application/x-protobuf" },
    });
    expect(none.statusCode).toBe(401);
    // Refused before the route runs, and still a Status in the request's encoding.
    expect(statusOf(none)).toMatchObject({ encoding: "protobuf", status: { code: 16 } });
    const readOnly = await post(body, {
      "content-type": "application/x-protobuf",
      authorization: "Bearer read-only-key",
    });
    expect(readOnly.statusCode).toBe(403);
    expect(statusOf(readOnly)).toMatchObject({ encoding: "protobuf", status: { code: 7 } });
    const readOnlyJson = await post(serialize(spans, "json"), {
      "content-type": "application/json",
      authorization: "Bearer read-only-key",
    });
    expect(statusOf(readOnlyJson)).toMatchObject({ encoding: "json", status: { code: 7 } });
    expect(sent).toHaveLength(0);
  });

  it("cuts a request over the topic's record size into several records, every span kept", async () => {
    topicBytes = 3_000;
    const { spans } = sdkRequest();
    const res = await post(serialize(spans, "protobuf"), { "content-type": "application/x-protobuf" });
    expect(res.statusCode).toBe(200);
    expect(sent.length).toBeGreaterThan(1);
    const ids = sent.flatMap((r) => decoder.decode(r.value).spans.map((s) => s.spanId));
    expect(new Set(ids)).toEqual(new Set(spans.map((s) => s.spanContext().spanId)));
    expect(ids).toHaveLength(spans.length);
    for (const record of sent) expect(record.value.length).toBeLessThanOrEqual(3_000);
  });

  it("answers 503 with retry-after while Kafka is away (exporters retry it)", async () => {
    kafkaDown = true;
    const { spans } = sdkRequest();
    const res = await post(serialize(spans, "protobuf"), { "content-type": "application/x-protobuf" });
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe("5");
    expect(statusOf(res)).toEqual({
      encoding: "protobuf",
      status: { code: 14, message: expect.stringContaining("retry later") as string },
    });
  });

  it("counts accepted spans", async () => {
    const { spans } = sdkRequest();
    const accepted = async () =>
      (await registry.getSingleMetric("reflector_otlp_http_spans_total")?.get())?.values.find(
        (v) => v.labels.result === "accepted",
      )?.value ?? 0;
    const before = await accepted();
    await post(serialize(spans, "protobuf"), { "content-type": "application/x-protobuf" });
    expect((await accepted()) - before).toBe(spans.length);
  });
});

describe("google.rpc.Status", () => {
  it("is encoded as protobuf's wire format says: code as field 1 (varint), message as field 2", async () => {
    const res = await post(Buffer.from([0xff, 0xff, 0xff, 0x01]), {
      "content-type": "application/x-protobuf",
    });
    const body = res.rawPayload;
    const { message } = decodeStatus(body);
    const text = Buffer.from(message, "utf8");
    expect(text.length).toBeLessThan(128);
    expect(body).toEqual(Buffer.concat([Buffer.from([0x08, 3, 0x12, text.length]), text]));
  });

  it("maps HTTP statuses onto google.rpc.Code", () => {
    const pairs = [400, 401, 403, 404, 413, 415, 429, 500, 503].map((s) => [s, rpcCodeOf(s)]);
    expect(pairs).toEqual([
      [400, 3],
      [401, 16],
      [403, 7],
      [404, 5],
      [413, 8],
      [415, 3],
      [429, 8],
      [500, 13],
      [503, 14],
    ]);
  });
});

describe("POST /v1/traces without the OTLP bridge", () => {
  it("answers 404 and says what to set", async () => {
    const bare = createHttpServer({
      registry: new Registry(),
      isConsuming: () => true,
      isStopping: () => false,
      dependencies: [],
      api: {
        keys: createApiKeyring(parseApiKeys("otlp-unit-key:tenant-a:decide")),
        stores: unused as ApiRoutesDeps["stores"],
        completeLoop: () => Promise.reject(new Error("not used")),
        commonIssues: () => Promise.reject(new Error("not used")),
        clock: { now: () => new Date() },
      },
    });
    const res = await bare.inject({
      method: "POST",
      url: "/v1/traces",
      payload: "{}",
      headers: { authorization: "Bearer otlp-unit-key", "content-type": "application/json" },
    });
    expect(res.statusCode).toBe(404);
    expect(statusOf(res)).toEqual({
      encoding: "json",
      status: { code: 5, message: expect.stringMatching(/OTLP_TOPIC/) as string },
    });
    await bare.close();
  });
});
