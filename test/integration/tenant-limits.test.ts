import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import {
  createRedisNewTraceLimit,
  createRedisVolumeLimit,
  otlpTenantLimits,
} from "../../src/adapters/redis/tenant-volume-limit.js";
import { loadConfig } from "../../src/config/config.js";
import { createOtlpHttpIngest } from "../../src/otlp-bridge-app.js";

/**
 * Per-tenant volume limits on the real Redis: two pods (two connections) count into one window
 * per tenant, so a limit holds for the Deployment as a whole, not per replica.
 */
let podA: Redis;
let podB: Redis;

beforeAll(() => {
  podA = new Redis(inject("redisUrl"));
  podB = new Redis(inject("redisUrl"));
});

afterAll(() => {
  podA.disconnect();
  podB.disconnect();
});

const prefix = () => `test-${randomUUID().slice(0, 8)}`;

/** A request as the stamper answers it: `spans` spans over `traceIds`. */
interface Request {
  spans: number;
  traceIds: string[];
}

/** OTLP/HTTP's ingest as one pod builds it, on its own Redis connection; counts what it sends. */
function pod(redis: Redis, keyPrefix: string, env: Record<string, string>) {
  const config = loadConfig({
    KAFKA_BROKERS: "localhost:9092",
    DATABASE_URL: "postgres://x@localhost/x",
    OTLP_TOPIC: "otlp.spans",
    REDIS_KEY_PREFIX: keyPrefix,
    ...env,
  });
  let next: Request = { spans: 1, traceIds: ["t"] };
  let sent = 0;
  const ingest = createOtlpHttpIngest({
    otlp: config.otlp,
    topic: "otlp.spans",
    limits: otlpTenantLimits(config, redis),
    recordBudget: () => 1_000_000,
    stamp: () => ({
      ok: true,
      values: [Buffer.from("x")],
      spans: next.spans,
      firstTraceId: next.traceIds[0] ?? null,
      traceIds: next.traceIds,
    }),
    send: () => {
      sent += 1;
      return Promise.resolve();
    },
  });
  return {
    accept(tenant: string, request: Request) {
      next = request;
      return ingest.accept(tenant, Buffer.from("{}"), "json");
    },
    sent: () => sent,
  };
}

const ids = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `trace-${String(from + i)}`);

describe("OTLP/HTTP's tenant limits across pods (Redis)", () => {
  it("holds the spans a minute for the tenant across two pods, not per pod", async () => {
    const keyPrefix = prefix();
    const env = { OTLP_HTTP_SPANS_PER_MINUTE: "100" };
    const a = pod(podA, keyPrefix, env);
    const b = pod(podB, keyPrefix, env);
    expect(await a.accept("tenant-a", { spans: 60, traceIds: ids(0, 1) })).toMatchObject({ ok: true });
    const refused = await b.accept("tenant-a", { spans: 60, traceIds: ids(0, 1) });
    expect(refused).toMatchObject({ ok: false, status: 429 });
    expect(refused.ok ? 0 : "retryAfterSeconds" in refused ? refused.retryAfterSeconds : 0).toBeGreaterThan(
      0,
    );
    // Another tenant has its own window; the refused spans were not counted.
    expect(await b.accept("tenant-b", { spans: 60, traceIds: ids(0, 1) })).toMatchObject({ ok: true });
    expect(await b.accept("tenant-a", { spans: 40, traceIds: ids(0, 1) })).toMatchObject({ ok: true });
    expect(a.sent() + b.sent()).toBe(3);
  });

  it("holds the new trace ids a minute across two pods; a known trace's later spans are never new", async () => {
    const keyPrefix = prefix();
    const env = { OTLP_NEW_TRACES_PER_MINUTE: "10" };
    const a = pod(podA, keyPrefix, env);
    const b = pod(podB, keyPrefix, env);
    expect(await a.accept("tenant-a", { spans: 7, traceIds: ids(0, 7) })).toMatchObject({ ok: true });
    // Four new ones would take the tenant to 11: refused whole, and counted nowhere.
    const refused = await b.accept("tenant-a", { spans: 4, traceIds: ids(7, 4) });
    expect(refused).toMatchObject({ ok: false, status: 429 });
    if (!refused.ok) expect(refused.message).toContain("new traces a minute");
    // The traces pod A admitted go on through pod B, with three new ones.
    expect(await b.accept("tenant-a", { spans: 10, traceIds: [...ids(0, 7), ...ids(7, 3)] })).toMatchObject({
      ok: true,
    });
    expect(await a.accept("tenant-a", { spans: 1, traceIds: ids(10, 1) })).toMatchObject({ status: 429 });
    expect(await a.accept("tenant-b", { spans: 1, traceIds: ids(10, 1) })).toMatchObject({ ok: true });
  });
});

describe("Redis volume limits", () => {
  it("never admits past the limit when pods take at once", async () => {
    const keyPrefix = prefix();
    const limits = [podA, podB].map((redis) =>
      createRedisVolumeLimit(redis, { keyPrefix, name: "new-lessons", perMinute: 25 }),
    );
    const taken = await Promise.all(
      Array.from({ length: 100 }, (_, i) => limits[i % 2]?.take("tenant-a", 1) ?? Promise.resolve(0)),
    );
    expect(taken.filter((t) => t === null)).toHaveLength(25);
    expect(await podA.get(`${keyPrefix}:limit:new-lessons:tenant-a`)).toBe("25");
  });

  it("admits as many new traces as fit when asked for some, and counts each trace once", async () => {
    const keyPrefix = prefix();
    const [a, b] = [podA, podB].map((redis) =>
      createRedisNewTraceLimit(redis, { keyPrefix, perMinute: 5, rememberMs: 60_000 }),
    );
    expect(await a?.admit("tenant-a", ["x", "y", "x"], "some")).toEqual({
      refused: [],
      retryAfterSeconds: null,
    });
    const some = await b?.admit("tenant-a", ["x", "p", "q", "r", "s"], "some");
    expect(some?.refused).toEqual(["s"]);
    expect(some?.retryAfterSeconds).toBeGreaterThan(0);
    expect(await a?.admit("tenant-a", ["p", "q", "y"], "all")).toEqual({
      refused: [],
      retryAfterSeconds: null,
    });
  });
});
