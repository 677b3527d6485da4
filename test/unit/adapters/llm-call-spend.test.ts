import { describe, expect, it } from "vitest";
import { FairSlots } from "../../../src/adapters/llm/fair-slots.js";
import { callLlm } from "../../../src/adapters/llm/llm-call.js";
import { createOpenAiEmbedder } from "../../../src/adapters/llm/openai-embedder.js";
import type OpenAI from "openai";

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

  function ledger() {
    const tokens = new Map<string, number>();
    const spend = {
      record: (tenantId: string, n: number) => {
        tokens.set(tenantId, (tokens.get(tenantId) ?? 0) + n);
        return Promise.resolve();
      },
      release: (tenantId: string, n: number) => {
        tokens.set(tenantId, (tokens.get(tenantId) ?? 0) - n);
        return Promise.resolve();
      },
    };
    return { tokens, spend };
  }

  it("reserves the estimate before the request and keeps counting it when the endpoint omits usage", async () => {
    const { tokens, spend } = ledger();
    const policy = { timeoutMs: 1_000, maxRetries: 0, spend, tenantId: "a" };
    const seenDuring: number[] = [];
    for (let i = 0; i < 50; i++) {
      await callLlm(
        policy,
        "m",
        "test",
        () => {
          seenDuring.push(tokens.get("a") ?? 0);
          return Promise.resolve({
            value: "ok",
            promptTokens: 0,
            completionTokens: 0,
            usageMissing: true,
            estimatedCompletionTokens: 30,
          });
        },
        200,
      );
    }
    // Without usage, 50 calls cost 50 estimates, not nothing.
    expect(tokens.get("a")).toBe(50 * 230);
    // Each call was counted before it went out: concurrent work sees it.
    expect(seenDuring[0]).toBe(200);
  });

  it("replaces the reservation with the reported usage, and gives it back when the request fails", async () => {
    const { tokens, spend } = ledger();
    const policy = { timeoutMs: 1_000, maxRetries: 0, spend, tenantId: "a" };
    await callLlm(
      policy,
      "m",
      "test",
      () => Promise.resolve({ value: 1, promptTokens: 150, completionTokens: 20 }),
      200,
    );
    expect(tokens.get("a")).toBe(170);
    await expect(
      callLlm(policy, "m", "test", () => Promise.reject(new Error("400 bad request")), 200),
    ).rejects.toThrow();
    expect(tokens.get("a")).toBe(170);
  });

  it("charges a remote embedder's tokens to the tenant whose texts they are", async () => {
    const { tokens, spend } = ledger();
    const client = {
      embeddings: {
        create: () => Promise.resolve({ data: [{ index: 0, embedding: [1, 0] }] }),
      },
    } as unknown as OpenAI;
    const embedder = createOpenAiEmbedder({ client, model: "e", timeoutMs: 1_000, maxRetries: 0, spend });
    await embedder.embed(["x".repeat(300)], "tenant-b");
    expect(tokens.get("tenant-b")).toBe(100);
  });
});
