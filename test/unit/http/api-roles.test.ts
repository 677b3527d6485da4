import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { createApiKeyring, parseApiKeys } from "../../../src/http/api-keys.js";
import { routeRoles, type ApiRoutesDeps } from "../../../src/http/api-routes.js";
import { createHttpServer } from "../../../src/http/http-server.js";
import { problem } from "../../support/problems.js";

/** One object standing in for every feature's store. */
type ApiStore = ApiRoutesDeps["stores"]["loops"] &
  ApiRoutesDeps["stores"]["lessons"] &
  ApiRoutesDeps["stores"]["feedback"];

// Roles decide before any store call: a store that answers nothing shows which requests got past.
const reached: string[] = [];
const store = new Proxy(
  {},
  {
    get: (_t, name) => () => {
      reached.push(String(name));
      return Promise.resolve({ items: [], nextCursor: null });
    },
  },
) as ApiStore;

const app = createHttpServer({
  registry: new Registry(),
  isConsuming: () => true,
  isStopping: () => false,
  dependencies: [],
  api: {
    keys: createApiKeyring(
      parseApiKeys(
        "reader-key-1:tenant-r:read, voter-key-22:tenant-r:read+vote, decider-key-3:tenant-r:decide",
      ),
    ),
    stores: { loops: store, lessons: store, feedback: store },
    completeLoop: () => {
      reached.push("completeLoop");
      return Promise.reject(new Error("stop here"));
    },
    commonIssues: () => Promise.resolve([]),
    clock: { now: () => new Date() },
  },
});
afterAll(async () => {
  await app.close();
});

const call = (method: "GET" | "POST", url: string, key: string, payload?: object) =>
  app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) });

describe("API key roles", () => {
  it("names a role for routes the server has (any other route is refused to every key)", async () => {
    await app.ready();
    for (const key of Object.keys(routeRoles)) {
      const [method, url] = key.split(" ");
      expect(app.hasRoute({ method: method as "GET" | "POST", url: url ?? "" }), key).toBe(true);
    }
  });

  it("lets a read-only key read but not vote, decide or override", async () => {
    expect((await call("GET", "/api/v1/insights", "reader-key-1")).statusCode).toBe(200);
    const vote = await call("POST", "/api/v1/feedback", "reader-key-1", {
      feedback_id: "f1",
      reflection_id: "00000000-0000-4000-8000-000000000000",
      rating: "up",
    });
    expect(vote.statusCode).toBe(403);
    expect(vote.json()).toEqual(
      problem(403, "/api/v1/feedback", { error: "forbidden", message: "this API key may not vote" }),
    );
    const decide = await call("POST", "/orchestrator/loop-complete", "reader-key-1", { loop_id: "l1" });
    expect(decide.statusCode).toBe(403);
    const override = await call("POST", "/orchestrator/override-guardrails/l1", "reader-key-1", {
      override_fatigue: true,
    });
    expect(override.statusCode).toBe(403);
    expect(reached).not.toContain("completeLoop");
    expect(reached).not.toContain("setOverride");
  });

  it("lets a deciding key report a loop, but not lift guardrails with it", async () => {
    const withOverride = await call("POST", "/orchestrator/loop-complete", "decider-key-3", {
      loop_id: "l1",
      override_fatigue: true,
      override_by: "someone",
    });
    expect(withOverride.statusCode).toBe(403);
    expect(withOverride.json()).toEqual(
      problem(403, "/orchestrator/loop-complete", {
        error: "forbidden",
        message: "this API key may not override",
      }),
    );
    expect(reached).not.toContain("setOverride");
    expect((await call("GET", "/api/v1/insights", "decider-key-3")).statusCode).toBe(403);
  });
});
