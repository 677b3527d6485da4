import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StrategiesAnswer } from "../../src/features/strategies/strategy-routes.js";
import { apiOf, failure, storeThrough, type Stored } from "../support/api-requests.js";
import { startHarness, type Harness } from "../support/harness.js";

/** Strategies are memories: the search route and the look-up by id, on the real services. */

const run = randomUUID().slice(0, 8);
const tenantA = `strategies-a-${run}`;
const tenantB = `strategies-b-${run}`;
const keyA = `key-strategies-a-${run}-0123456789`;
const keyB = `key-strategies-b-${run}-0123456789`;
const operator = `key-strategies-op-${run}-0123456789`;

let h: Harness;
let timeout: Stored;
let rateLimit: Stored;

beforeAll(async () => {
  h = await startHarness({
    env: {
      API_KEYS: `${keyA}:${tenantA}:read+vote, ${keyB}:${tenantB}:read, ${operator}:${tenantA}:read+override`,
    },
  });
  timeout = await storeThrough(
    h,
    failure(
      tenantA,
      "query_timeout",
      "Query on orders exceeded the 30s statement timeout",
      "Fetch order history",
    ),
  );
  rateLimit = await storeThrough(
    h,
    failure(
      tenantA,
      "rate_limited",
      "429 Too Many Requests from payouts_api, Retry-After: 20",
      "Sync payouts",
      {
        category: "rate_limit_error",
        tool: "payouts_api",
      },
    ),
  );
  await storeThrough(
    h,
    failure(
      tenantB,
      "query_timeout",
      "Query on orders exceeded the 30s statement timeout",
      "Fetch order history",
    ),
  );
});

afterAll(async () => {
  await h.close();
});

const api = apiOf(() => h, keyA);

interface Strategy {
  strategy_id: string;
  reflection_id: string;
  strategy_text: string;
  importance: number;
  tags: string[];
}
const itemsOf = (body: Record<string, unknown>) => body.items as Strategy[];

describe("GET /api/v1/strategies", () => {
  it("lists the tenant's strategies as memories of their own, with the lesson's importance raised by 10 %", async () => {
    const listed = await api("GET", "/api/v1/strategies");
    expect(listed.status).toBe(200);
    expect(StrategiesAnswer.safeParse(listed.body).success).toBe(true);
    expect(listed.body).toMatchObject({ limit: 5, offset: 0, next_offset: null });
    const items = itemsOf(listed.body);
    expect(items.map((s) => s.reflection_id).sort()).toEqual(
      [timeout.reflectionId, rateLimit.reflectionId].sort(),
    );
    const lessons = (await api("GET", "/api/v1/reflections")).body.items as {
      id: string;
      importance: number;
      strategy_id: string;
    }[];
    for (const strategy of items) {
      const lesson = lessons.find((l) => l.id === strategy.reflection_id);
      expect(strategy.strategy_id).toBe(lesson?.strategy_id);
      expect(strategy.importance).toBeCloseTo(Math.min(1, (lesson?.importance ?? 0) * 1.1), 5);
      expect(strategy.tags).toContain("strategy");
    }
    // Tenant B sees only its own.
    const other = itemsOf((await api("GET", "/api/v1/strategies", { key: keyB })).body);
    expect(other).toHaveLength(1);
    expect(other[0]?.reflection_id).not.toBe(timeout.reflectionId);
  });

  it("filters by words, project, tags and importance, and pages with limit and offset", async () => {
    const words = itemsOf((await api("GET", "/api/v1/strategies?q=paginated%20postgres_query")).body);
    expect(words.map((s) => s.reflection_id)).toEqual([timeout.reflectionId]);
    expect((await api("GET", "/api/v1/strategies?q=zeppelin")).body.items).toEqual([]);
    expect(itemsOf((await api("GET", "/api/v1/strategies?project_id=orders")).body)).toHaveLength(2);
    expect((await api("GET", "/api/v1/strategies?project_id=billing")).body.items).toEqual([]);
    const tagged = itemsOf((await api("GET", "/api/v1/strategies?tags=strategy,performance")).body);
    expect(tagged.map((s) => s.reflection_id)).toEqual([timeout.reflectionId]);
    expect((await api("GET", "/api/v1/strategies?min_importance=0.99")).body.items).toEqual([]);
    const first = await api("GET", "/api/v1/strategies?limit=1");
    expect(first.body).toMatchObject({ limit: 1, offset: 0, next_offset: 1 });
    const second = await api("GET", "/api/v1/strategies?limit=1&offset=1");
    expect(second.body.next_offset).toBeNull();
    expect(itemsOf(second.body)[0]?.strategy_id).not.toBe(itemsOf(first.body)[0]?.strategy_id);
    for (const bad of ["limit=0", "limit=101", "min_importance=2", "k=5", "offset=-1"]) {
      expect((await api("GET", `/api/v1/strategies?${bad}`)).status, bad).toBe(400);
    }
  });

  it("answers one strategy by id, to its tenant only", async () => {
    const [strategy] = itemsOf((await api("GET", "/api/v1/strategies?tags=postgres_query")).body);
    const one = await api("GET", `/api/v1/strategies/${strategy?.strategy_id ?? ""}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      strategy_id: strategy?.strategy_id,
      reflection_id: timeout.reflectionId,
    });
    expect(
      (await api("GET", `/api/v1/strategies/${strategy?.strategy_id ?? ""}`, { key: keyB })).status,
    ).toBe(404);
    expect((await api("GET", `/api/v1/strategies/${randomUUID()}`)).status).toBe(404);
  });

  it("leaves out the strategy of a lesson feedback withheld, unless an operator asks", async () => {
    const down = await api("POST", "/api/v1/feedback", {
      body: { reflection_id: rateLimit.reflectionId, rating: "down" },
    });
    expect(down.status).toBe(201);
    const served = itemsOf((await api("GET", "/api/v1/strategies")).body);
    expect(served.map((s) => s.reflection_id)).toEqual([timeout.reflectionId]);
    expect((await api("GET", "/api/v1/strategies?include_withheld=true")).status).toBe(403);
    const all = await api("GET", "/api/v1/strategies?include_withheld=true", { key: operator });
    expect(itemsOf(all.body).map((s) => s.reflection_id)).toContain(rateLimit.reflectionId);
  });
});
