import { afterAll, describe, expect, it } from "vitest";
import { apiTestServer, type AnyApiStore } from "../../support/api-server.js";
import { storeError } from "../../../src/adapters/postgres/store-errors.js";
import { ReflectorError } from "../../../src/domain/errors.js";
import { problem } from "../../support/problems.js";

// Only the mapping of failures to statuses is under test here; the real store is exercised by
// test/integration/http-api.test.ts.
let failure: unknown = null;
const failing = new Proxy(
  {},
  {
    get: () => () => Promise.reject(failure instanceof Error ? failure : new Error(String(failure))),
  },
) as AnyApiStore;
const logged: { level: string; msg: string }[] = [];

const app = apiTestServer("unit-test-key:tenant-u:read+vote+decide+override", {
  stores: { loops: failing, lessons: failing, feedback: failing },
  commonIssues: () => Promise.reject(failure instanceof Error ? failure : new Error("x")),
  logger: {
    warn: (_obj: unknown, msg?: string) => {
      logged.push({ level: "warn", msg: msg ?? "" });
    },
    error: (_obj: unknown, msg?: string) => {
      logged.push({ level: "error", msg: msg ?? "" });
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
