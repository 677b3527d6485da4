import { describe, expect, it } from "vitest";
import { FairSlots } from "../../../src/adapters/llm/fair-slots.js";
import { callLlm } from "../../../src/adapters/llm/llm-call.js";

/** callLlm's side of the spend limits, with a request function standing in for the endpoint. */
describe("callLlm with slots and a budget", () => {
  it("holds one slot per request, never more than the cap at once, and counts reported tokens for the tenant", async () => {
    const slots = new FairSlots(2);
    const recorded: [string, number][] = [];
    let now = 0;
    let max = 0;
    const policy = {
      timeoutMs: 1_000,
      maxRetries: 0,
      slots,
      spend: {
        record: (tenantId: string, tokens: number) => {
          recorded.push([tenantId, tokens]);
          return Promise.resolve();
        },
      },
    };
    const request = async () => {
      now += 1;
      max = Math.max(max, now);
      await new Promise((resolve) => setTimeout(resolve, 5));
      now -= 1;
      return { value: "ok", promptTokens: 100, completionTokens: 20 };
    };
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        callLlm({ ...policy, tenantId: i % 2 === 0 ? "a" : "b" }, "m", "test", request),
      ),
    );
    expect(results).toEqual(Array(6).fill("ok"));
    expect(max).toBe(2);
    expect(slots.inUse).toBe(0);
    expect(recorded.filter(([t]) => t === "a")).toEqual(Array(3).fill(["a", 120]));
    expect(recorded.filter(([t]) => t === "b")).toEqual(Array(3).fill(["b", 120]));
  });

  it("gives the slot back when the request fails, and counts nothing for work of no tenant", async () => {
    const slots = new FairSlots(1);
    const recorded: number[] = [];
    const spend = {
      record: (_tenant: string, tokens: number) => {
        recorded.push(tokens);
        return Promise.resolve();
      },
    };
    const policy = { timeoutMs: 1_000, maxRetries: 0, slots, spend };
    await expect(
      callLlm({ ...policy, tenantId: "a" }, "m", "test", () => Promise.reject(new Error("400 bad request"))),
    ).rejects.toThrow();
    expect(slots.inUse).toBe(0);
    await callLlm(policy, "m", "embeddings", () =>
      Promise.resolve({ value: 1, promptTokens: 50, completionTokens: 0 }),
    );
    expect(recorded).toEqual([]);
    expect(slots.inUse).toBe(0);
  });
});
