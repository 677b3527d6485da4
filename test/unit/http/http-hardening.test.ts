import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { ReflectorError } from "../../../src/domain/errors.js";
import type { ApiRoutesDeps } from "../../../src/http/api-routes.js";
import { createApiKeyring, parseApiKeys } from "../../../src/http/api-keys.js";
import { createAuthThrottle } from "../../../src/http/auth-throttle.js";
import { createHttpServer } from "../../../src/http/http-server.js";

type ApiStore = ApiRoutesDeps["stores"]["loops"] &
  ApiRoutesDeps["stores"]["lessons"] &
  ApiRoutesDeps["stores"]["feedback"];

let failure: Error | null = null;
const store = new Proxy(
  {},
  { get: () => () => (failure ? Promise.reject(failure) : Promise.resolve(null)) },
) as ApiStore;
const warned: unknown[] = [];

function server(
  options: { allowCleartextKeys?: boolean; now?: () => number; trustedProxies?: string[] } = {},
) {
  return createHttpServer({
    registry: new Registry(),
    trustedProxies: options.trustedProxies ?? ["10.0.0.0/8"],
    isConsuming: () => true,
    isStopping: () => false,
    dependencies: [],
    api: {
      keys: createApiKeyring(parseApiKeys("hardening-key-1:tenant-h:read+vote+decide+override")),
      stores: { loops: store, lessons: store, feedback: store },
      completeLoop: () => Promise.reject(new Error("not used")),
      commonIssues: () => Promise.resolve([]),
      clock: { now: () => new Date() },
      logger: { warn: (obj: unknown) => warned.push(obj), error: () => undefined },
      ...(options.allowCleartextKeys ? { allowCleartextKeys: true } : {}),
      throttle: createAuthThrottle({
        maxFailures: 5,
        windowMs: 60_000,
        ...(options.now ? { now: options.now } : {}),
      }),
    },
  });
}

const app = server();
afterAll(() => app.close());

const status = (key: string, remoteAddress = "127.0.0.1", headers: Record<string, string> = {}) =>
  app.inject({
    method: "GET",
    url: "/orchestrator/guardrails-status/loop-1",
    remoteAddress,
    headers: { authorization: `Bearer ${key}`, ...headers },
  });

describe("HTTP hardening", () => {
  it("answers a refused write with a 400 that carries nothing of Postgres' message", async () => {
    failure = new ReflectorError(
      "DATA_REJECTED",
      'postgres refused the event\'s data (22P05): unsupported Unicode escape sequence in table "feedback" column "comment"',
    );
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/feedback",
      headers: { authorization: "Bearer hardening-key-1" },
      payload: { reflection_id: "6f1c3b0e-8a7d-4c1e-9b2a-1d2e3f4a5b6c", rating: "up" },
    });
    failure = null;
    expect(res.statusCode).toBe(400);
    // Every key but the request's own path (instance), which names the route.
    const { instance: _path, ...said } = res.json<Record<string, unknown>>();
    expect(JSON.stringify(said)).not.toMatch(/postgres|22P05|feedback"|column/i);
    expect(res.json()).toMatchObject({ error: "bad_request" });
    expect(warned.length).toBeGreaterThan(0);
  });

  it("accepts in a path every loop id a body may carry (200 characters), not 414 past 100", async () => {
    const long = "l".repeat(200);
    const res = await app.inject({
      method: "GET",
      url: `/orchestrator/guardrails-status/${long}`,
      headers: { authorization: "Bearer hardening-key-1" },
    });
    expect(res.statusCode).not.toBe(414);
    expect(res.statusCode).toBeLessThan(500);
  });

  it("bounds how long a request may take (Fastify's default is no limit)", () => {
    expect((app.initialConfig as { requestTimeout?: number }).requestTimeout).toBe(30_000);
  });

  it("answers 429 to an address that keeps presenting unknown keys, whatever key it sends next", async () => {
    const guesser = "10.9.9.9";
    const proto = { "x-forwarded-proto": "https" };
    for (let i = 0; i < 5; i += 1)
      expect((await status(`wrong-key-${String(i)}`, guesser, proto)).statusCode).toBe(401);
    const blocked = await status("hardening-key-1", guesser, proto);
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
    // Another address is not held back.
    expect((await status("hardening-key-1", "10.9.9.10", proto)).statusCode).not.toBe(429);
  });

  it("refuses an API key sent over plain HTTP from another host, unless allowed on purpose", async () => {
    const cleartext = await status("hardening-key-1", "10.1.2.3");
    expect(cleartext.statusCode).toBe(403);
    expect(cleartext.json<{ message: string }>().message).toMatch(/HTTPS only.*ALLOW_CLEARTEXT_CREDENTIALS/);
    // Behind a TLS-terminating proxy, or from this host, it is taken.
    expect(
      (await status("hardening-key-1", "10.1.2.3", { "x-forwarded-proto": "https" })).statusCode,
    ).not.toBe(403);
    expect((await status("hardening-key-1", "127.0.0.1")).statusCode).not.toBe(403);
    const lab = server({ allowCleartextKeys: true });
    const res = await lab.inject({
      method: "GET",
      url: "/orchestrator/guardrails-status/loop-1",
      remoteAddress: "10.1.2.3",
      headers: { authorization: "Bearer hardening-key-1" },
    });
    expect(res.statusCode).not.toBe(403);
    await lab.close();
  });
});

describe("forwarded headers and the throttle behind a proxy", () => {
  const proxy = "10.20.0.1";
  const behind = server({ trustedProxies: [proxy] });
  afterAll(() => behind.close());
  const via = (key: string | null, remoteAddress: string, headers: Record<string, string> = {}) =>
    behind.inject({
      method: "GET",
      url: "/orchestrator/guardrails-status/loop-1",
      remoteAddress,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    });

  it("believes X-Forwarded-Proto only from a trusted proxy", async () => {
    const https = { "x-forwarded-proto": "https" };
    expect((await via("hardening-key-1", "192.168.7.7", https)).statusCode).toBe(403);
    expect((await via("hardening-key-1", proxy, https)).statusCode).not.toBe(403);
  });

  it("counts a guesser behind the proxy by its forwarded address, not everyone behind it", async () => {
    const from = (client: string) => ({ "x-forwarded-proto": "https", "x-forwarded-for": client });
    for (let i = 0; i < 5; i += 1)
      expect((await via(`wrong-key-${String(i)}`, proxy, from("203.0.113.9"))).statusCode).toBe(401);
    expect((await via("hardening-key-1", proxy, from("203.0.113.9"))).statusCode).toBe(429);
    expect((await via("hardening-key-1", proxy, from("203.0.113.10"))).statusCode).not.toBe(429);
  });

  it("never locks anyone out for requests without a key", async () => {
    const from = { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.20" };
    for (let i = 0; i < 30; i += 1) expect((await via(null, proxy, from)).statusCode).toBe(401);
    expect((await via("hardening-key-1", proxy, from)).statusCode).not.toBe(429);
  });
});

describe("auth throttle", () => {
  it("forgets an address's failures when its window ends, and holds at most maxClients addresses", () => {
    let t = 0;
    const throttle = createAuthThrottle({ maxFailures: 2, windowMs: 1_000, maxClients: 2, now: () => t });
    throttle.failed("a");
    throttle.failed("a");
    expect(throttle.retryAfter("a")).toBe(1);
    t = 1_000;
    expect(throttle.retryAfter("a")).toBeNull();
    throttle.failed("b");
    throttle.failed("c");
    throttle.failed("d");
    throttle.failed("d");
    expect(throttle.retryAfter("d")).toBe(1);
  });
});
