import { RateLimiterMemory } from "rate-limiter-flexible";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createTenantBudget,
  type SpendObserver,
  type TokenCounter,
} from "../../../src/adapters/redis/tenant-token-budget.js";
import { ReflectorError } from "../../../src/domain/errors.js";

/** The budget logic on rate-limiter-flexible's in-memory store, under a fake clock. */
function recorder() {
  const seen = { tokens: [] as [string, number][], over: [] as [string, string][], errors: [] as string[] };
  const observer: SpendObserver = {
    tokens: (tenant, n) => seen.tokens.push([tenant, n]),
    overBudget: (tenant, action) => seen.over.push([tenant, action]),
    error: (op) => seen.errors.push(op),
  };
  return { seen, observer };
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date("2026-11-25T00:00:00Z") });
});
afterEach(() => {
  vi.useRealTimers();
});

async function errorOf(work: Promise<unknown>): Promise<ReflectorError> {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReflectorError);
  return err as ReflectorError;
}

describe("tenant token budget", () => {
  it("admits a tenant until its reported tokens reach the budget, then falls back; the window's end admits it again", async () => {
    const { seen, observer } = recorder();
    const counter = new RateLimiterMemory({ points: 1_000, duration: 60 });
    const budget = createTenantBudget({ counter, overBudget: "heuristic", observer });
    expect(await budget.admit("tenant-a")).toBe("model");
    await budget.record("tenant-a", 600);
    expect(await budget.admit("tenant-a")).toBe("model");
    await budget.record("tenant-a", 399);
    expect(await budget.admit("tenant-a")).toBe("model"); // 999 < 1000
    await budget.record("tenant-a", 1);
    expect(await budget.admit("tenant-a")).toBe("offline");
    // Another tenant has its own window.
    expect(await budget.admit("tenant-b")).toBe("model");
    vi.advanceTimersByTime(59_000);
    expect(await budget.admit("tenant-a")).toBe("offline");
    vi.advanceTimersByTime(1_001);
    expect(await budget.admit("tenant-a")).toBe("model");
    expect(seen.tokens).toEqual([
      ["tenant-a", 600],
      ["tenant-a", 399],
      ["tenant-a", 1],
    ]);
    expect(seen.over).toEqual([
      ["tenant-a", "heuristic"],
      ["tenant-a", "heuristic"],
    ]);
  });

  it("the window starts at the tenant's first counted tokens, not at a fixed clock boundary", async () => {
    const counter = new RateLimiterMemory({ points: 100, duration: 10 });
    const budget = createTenantBudget({ counter, overBudget: "heuristic" });
    vi.advanceTimersByTime(7_000);
    await budget.record("t", 100);
    vi.advanceTimersByTime(9_000);
    expect(await budget.admit("t")).toBe("offline");
    vi.advanceTimersByTime(1_001);
    expect(await budget.admit("t")).toBe("model");
  });

  it("in wait mode, over budget is LLM_BUDGET_EXHAUSTED with the time until the window resets", async () => {
    const { seen, observer } = recorder();
    const counter = new RateLimiterMemory({ points: 50, duration: 30 });
    const budget = createTenantBudget({ counter, overBudget: "wait", observer });
    await budget.record("tenant-a", 80);
    vi.advanceTimersByTime(10_000);
    const err = await errorOf(budget.admit("tenant-a"));
    expect(err.code).toBe("LLM_BUDGET_EXHAUSTED");
    expect(err.message).toContain('"tenant-a" used 80 of its 50 LLM tokens');
    expect(err.message).toContain("resets in 20000 ms");
    expect(seen.over).toEqual([["tenant-a", "wait"]]);
  });

  it("ignores non-positive or fractional counts (an endpoint that reports no usage costs nothing)", async () => {
    const counter = new RateLimiterMemory({ points: 10, duration: 30 });
    const budget = createTenantBudget({ counter, overBudget: "heuristic" });
    await budget.record("t", 0);
    await budget.record("t", -5);
    await budget.record("t", 2.5);
    expect(await counter.get("t")).toBeNull();
  });

  it("a count that cannot be read holds the event as a Redis outage; one that cannot be written is reported, not thrown", async () => {
    const { seen, observer } = recorder();
    const broken: TokenCounter = {
      points: 10,
      get: () => Promise.reject(new Error("connect ECONNREFUSED")),
      penalty: () => Promise.reject(new Error("connect ECONNREFUSED")),
    };
    const budget = createTenantBudget({ counter: broken, overBudget: "heuristic", observer });
    expect((await errorOf(budget.admit("t"))).code).toBe("INDEX_UNAVAILABLE");
    await budget.record("t", 5);
    expect(seen.errors).toEqual(["read", "write"]);
  });
});
