import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import type { ApiRoutesDeps } from "../../../src/http/api-routes.js";
import { storeError } from "../../../src/adapters/postgres/store-errors.js";
import { ReflectorError } from "../../../src/domain/errors.js";
import { createApiKeyring, parseApiKeys } from "../../../src/http/api-keys.js";
import { createHttpServer } from "../../../src/http/http-server.js";
import { problem } from "../../support/problems.js";

/** One object standing in for every feature's store. */
type ApiStore = ApiRoutesDeps["stores"]["loops"] &
  ApiRoutesDeps["stores"]["lessons"] &
  ApiRoutesDeps["stores"]["feedback"];

// Only the mapping of failures to statuses is under test here; the real store is exercised by
// test/integration/http-api.test.ts.
let failure: unknown = null;
const failing = new Proxy(
  {},
  {
    get: () => () => Promise.reject(failure instanceof Error ? failure : new Error(String(failure))),
  },
) as ApiStore;
const logged: { level: string; msg: string }[] = [];

const app = createHttpServer({
  registry: new Registry(),
  isConsuming: () => true,
  isStopping: () => false,
  dependencies: [],
  api: {
    keys: createApiKeyring(parseApiKeys("unit-test-key:tenant-u:read+vote+decide+override")),
    stores: { loops: failing, lessons: failing, feedback: failing },
    completeLoop: () => Promise.reject(new Error("not used")),
    commonIssues: () => Promise.reject(failure instanceof Error ? failure : new Error("x")),
    clock: { now: () => new Date() },
    logger: {
      warn: (_obj: unknown, msg?: string) => {
        logged.push({ level: "warn", msg: msg ?? "" });
      },
      error: (_obj: unknown, msg?: string) => {
        logged.push({ level: "error", msg: msg ?? "" });
      },
    },
  },
});

afterAll(async () => {
  await app.close();
});

const get = (url: string) =>
  app.inject({ method: "GET", url, headers: { authorization: "Bearer unit-test-key" } });

describe("API failures", () => {
  it("answers 503 with retry-after when Postgres is unavailable, and logs a warning", async () => {
    failure = new ReflectorError("STORE_UNAVAILABLE", "postgres: connection refused");
    const res = await get("/api/v1/reflections");
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe("5");
    expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(res.json()).toEqual(
      problem(503, "/api/v1/reflections", {
        error: "unavailable",
        message: "a dependency is unavailable; retry later",
      }),
    );
    expect(logged.at(-1)).toEqual({ level: "warn", msg: "api request failed: dependency unavailable" });
  });

  it("knows no transport: a connection error the store did not name is a bug (adapters name theirs)", async () => {
    failure = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    expect((await get("/api/v1/insights")).statusCode).toBe(500);
    failure = storeError(failure);
    expect((await get("/api/v1/insights")).statusCode).toBe(503);
  });

  it("answers 500 without details for a bug, and logs it as an error", async () => {
    failure = new ReflectorError("INTERNAL", "invariant broken: secret detail");
    const res = await get("/api/v1/reflections/signatures/0123456789abcdef");
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual(
      problem(500, "/api/v1/reflections/signatures/0123456789abcdef", {
        error: "internal",
        message: "internal error",
      }),
    );
    expect(res.body).not.toContain("secret detail");
    expect(logged.at(-1)).toEqual({ level: "error", msg: "api request failed" });
  });
});
