import { afterAll, describe, expect, it } from "vitest";
import { apiTestServer, type AnyApiStore } from "../../support/api-server.js";

let storeCalls = 0;
const store = new Proxy(
  {},
  {
    get: () => () => {
      storeCalls += 1;
      return Promise.resolve(null);
    },
  },
) as AnyApiStore;
const app = apiTestServer("hostile-test-key:tenant-h:read+vote+decide+override", {
  stores: { loops: store, lessons: store, feedback: store },
});
afterAll(async () => {
  await app.close();
});

const post = (url: string, payload: string) =>
  app.inject({
    method: "POST",
    url,
    payload,
    headers: { authorization: "Bearer hostile-test-key", "content-type": "application/json" },
  });

describe("hostile request bodies", () => {
  it("refuses a body over the limit with 413, before parsing it", async () => {
    const res = await post("/api/v1/feedback", JSON.stringify({ comment: "x".repeat(2_000_000) }));
    expect(res.statusCode).toBe(413);
    expect(storeCalls).toBe(0);
  });

  it("answers 400 to 10,000 levels of nesting, and stays up", async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    const res = await post("/orchestrator/loop-complete", deep);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: "bad_request" });
    expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    expect(storeCalls).toBe(0);
  });

  it("answers 400 to a rerun number past the bound in loop_id or rerun_of, however many digits", async () => {
    for (const body of [
      { loop_id: "loop-1_r3000000000", rerun_of: "loop-1" },
      { loop_id: "loop-1_r9999999999999", rerun_of: "loop-1" },
      { loop_id: "loop-2", rerun_of: `loop-1_r${"9".repeat(60)}` },
    ]) {
      const res = await post("/orchestrator/loop-complete", JSON.stringify(body));
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json<{ message: string }>().message).toMatch(/rerun number .* is beyond 100000/);
    }
    expect(storeCalls).toBe(0);
  });

  it("answers 400 to NUL bytes and lone surrogates in ids", async () => {
    for (const loopId of ["loop\u0000x", "loop\ud800"]) {
      const res = await post("/orchestrator/loop-complete", JSON.stringify({ loop_id: loopId }));
      expect(res.statusCode, JSON.stringify(loopId)).toBe(400);
    }
    expect(storeCalls).toBe(0);
  });
});
