import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { ApiRoutesDeps } from "../../../src/http/api-routes.js";
import { deadLetterMessage } from "../../../src/adapters/kafka/failure-records.js";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { createApiKeyring, parseApiKeys } from "../../../src/http/api-keys.js";
import { createHttpServer } from "../../../src/http/http-server.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetrics } from "../../../src/observability/metrics.js";

/** One object standing in for every feature's store. */
type ApiStore = ApiRoutesDeps["stores"]["loops"] &
  ApiRoutesDeps["stores"]["lessons"] &
  ApiRoutesDeps["stores"]["feedback"];

const apiKey = "api-key-do-not-leak-7f3e";
const openAiKey = "sk-do-not-leak-93ab";
const dbPassword = "pg-password-do-not-leak";

function captured() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger("debug", stream) };
}

describe("secrets stay out of logs, errors, metrics and dead letters", () => {
  it("logs redact keys and authorization headers", () => {
    const { lines, logger } = captured();
    logger.warn({ apiKey: openAiKey, headers: { authorization: `Bearer ${apiKey}` } }, "request failed");
    logger.info({ config: { openai: { apiKey: openAiKey } } }, "started");
    const text = lines.join("");
    expect(text).toContain("request failed");
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(openAiKey);
  });

  it("logs redact SASL and registry passwords wherever a config or client options hold them", () => {
    const { lines, logger } = captured();
    const config = loadConfig({
      KAFKA_SASL_MECHANISM: "scram-sha-512",
      KAFKA_SASL_USERNAME: "reflector",
      KAFKA_SASL_PASSWORD: "kafka-password-do-not-leak",
      SCHEMA_REGISTRY_URL: "https://registry:8081",
      SCHEMA_REGISTRY_USERNAME: "svc",
      SCHEMA_REGISTRY_PASSWORD: "registry-password-do-not-leak",
    });
    logger.info({ config }, "started");
    logger.warn({ sasl: config.kafka.sasl }, "connecting");
    const text = lines.join("");
    expect(text).toContain('"username":"reflector"');
    expect(text).not.toContain("do-not-leak");
  });

  it("a bad configuration lists its problems without the secret values", () => {
    let error: unknown;
    try {
      loadConfig({
        DATABASE_URL: `postgres://reflector:${dbPassword}@db:5432/reflector`,
        OPENAI_API_KEY: openAiKey,
        API_KEYS: `${apiKey}:tenant-a,short:x`,
        REFLECTOR_MODE: "nonsense",
        KAFKA_SASL_PASSWORD: dbPassword,
        SCHEMA_REGISTRY_PASSWORD: dbPassword,
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/REFLECTOR_MODE/);
    expect(message).toMatch(/API_KEYS/);
    for (const secret of [apiKey, openAiKey, dbPassword]) expect(message).not.toContain(secret);
  });

  it("an unknown key's 401 and the metrics never echo a key", async () => {
    const metrics = createMetrics();
    const app = createHttpServer({
      registry: metrics.registry,
      isConsuming: () => true,
      isStopping: () => false,
      dependencies: [],
      api: {
        keys: createApiKeyring(parseApiKeys(`${apiKey}:tenant-a:read+vote+decide+override`)),
        stores: { loops: {} as ApiStore, lessons: {} as ApiStore, feedback: {} as ApiStore },
        completeLoop: () => Promise.reject(new Error("not used")),
        commonIssues: () => Promise.resolve([]),
        clock: { now: () => new Date() },
      },
    });
    const denied = await app.inject({
      method: "GET",
      url: "/api/v1/insights",
      headers: { authorization: `Bearer ${apiKey}-wrong` },
    });
    expect(denied.statusCode).toBe(401);
    expect(denied.body).not.toContain(apiKey);
    const scraped = await app.inject({ method: "GET", url: "/metrics" });
    expect(scraped.body).not.toContain(apiKey);
    await app.close();
  });

  it("a dead letter carries the producer's headers and the diagnosis, never the processor's secrets", () => {
    const message = {
      key: Buffer.from("loop-1"),
      value: Buffer.from("{}"),
      headers: { traceparent: "00-abc-01" },
      offset: "4",
      timestamp: "0",
      attributes: 0,
    };
    const dead = deadLetterMessage(
      { topic: "in", partition: 0, message },
      { groupId: "g", code: "STORE_UNAVAILABLE", reason: "postgres: connection refused", now: new Date(0) },
      () => true,
    );
    const headers = JSON.stringify(dead.headers);
    for (const secret of [apiKey, openAiKey, dbPassword]) expect(headers).not.toContain(secret);
    expect(Object.keys(dead.headers ?? {}).sort()).toEqual([
      "reflector.consumer.group",
      "reflector.error.code",
      "reflector.error.message",
      "reflector.failed.at",
      "reflector.original.offset",
      "reflector.original.partition",
      "reflector.original.topic",
      "traceparent",
    ]);
  });
});
