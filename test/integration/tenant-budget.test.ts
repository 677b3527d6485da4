import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createRedisTenantBudget } from "../../src/adapters/redis/tenant-token-budget.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The token budget on the real Redis: two budgets (two pods) with their own connections count
 * into one window per tenant, concurrent additions are never lost, and the window ends.
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

function budgets(windowMs: number, budgetTokens: number) {
  const keyPrefix = `test-${randomUUID().slice(0, 8)}`;
  const options = { keyPrefix, budgetTokens, windowMs, overBudget: "heuristic" as const };
  return {
    keyPrefix,
    a: createRedisTenantBudget(podA, options),
    b: createRedisTenantBudget(podB, options),
  };
}

describe("tenant token budget in Redis", () => {
  it("is one budget for every pod: tokens counted by one pod put the tenant over budget on the other", async () => {
    const { a, b, keyPrefix } = budgets(60_000, 1_000);
    await a.record("tenant-a", 700);
    expect(await b.admit("tenant-a")).toBe("model");
    await b.record("tenant-a", 300);
    expect(await a.admit("tenant-a")).toBe("offline");
    expect(await b.admit("tenant-a")).toBe("offline");
    expect(await a.admit("tenant-b")).toBe("model");
    // The window's count is one key per tenant, with the window as its expiry.
    const key = `${keyPrefix}:llm-budget:tenant-a`;
    expect(await podA.get(key)).toBe("1000");
    const ttl = await podA.pttl(key);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it("loses no tokens when both pods count at once, and a budget of exactly the sum is reached", async () => {
    const amounts = Array.from({ length: 100 }, (_, i) => 37 + (i % 5));
    const expected = amounts.reduce((x, y) => x + y, 0);
    const { a, b, keyPrefix } = budgets(60_000, expected);
    await Promise.all(amounts.map((n, i) => (i % 2 === 0 ? a : b).record("tenant-c", n)));
    expect(await podA.get(`${keyPrefix}:llm-budget:tenant-c`)).toBe(String(expected));
    expect(await a.admit("tenant-c")).toBe("offline");
  });

  it("admits the tenant again once its window has passed", async () => {
    const { a, b } = budgets(1_000, 100);
    await a.record("tenant-d", 150);
    expect(await b.admit("tenant-d")).toBe("offline");
    const started = Date.now();
    await waitFor(async () => (await b.admit("tenant-d")) === "model", {
      timeoutMs: 5_000,
      intervalMs: 50,
      what: "the window to end",
    });
    expect(Date.now() - started).toBeGreaterThan(500);
  });
});
