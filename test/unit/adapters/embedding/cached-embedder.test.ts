import { describe, expect, it } from "vitest";
import { createCachedEmbedder } from "../../../../src/adapters/embedding/cached-embedder.js";
import type { Embedder } from "../../../../src/pipeline/ports.js";

function counting(): Embedder & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    name: "counting",
    similarityScale: { unrelated: 0.1, related: 0.5 },
    asked,
    embed(texts) {
      asked.push(texts);
      return Promise.resolve(texts.map((t) => [t.length, 1]));
    },
  };
}

describe("cached embedder", () => {
  it("asks the model only for texts it has not seen, in one batch, and keeps the order", async () => {
    const inner = counting();
    const cached = createCachedEmbedder(inner);
    expect(await cached.embed(["a", "bb"])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(await cached.embed(["bb", "ccc", "a", "ccc"])).toEqual([
      [2, 1],
      [3, 1],
      [1, 1],
      [3, 1],
    ]);
    expect(inner.asked).toEqual([["a", "bb"], ["ccc"]]);
    expect(cached.name).toBe("counting");
    expect(cached.similarityScale).toEqual({ unrelated: 0.1, related: 0.5 });
  });

  it("forgets the least recently used text beyond its size", async () => {
    const inner = counting();
    const cached = createCachedEmbedder(inner, 2);
    await cached.embed(["a", "bb"]);
    await cached.embed(["a"]); // a is now the most recent
    await cached.embed(["ccc"]); // evicts bb
    await cached.embed(["a", "bb"]);
    expect(inner.asked).toEqual([["a", "bb"], ["ccc"], ["bb"]]);
  });
});
