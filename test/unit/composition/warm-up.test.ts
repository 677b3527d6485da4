import { describe, expect, it } from "vitest";
import type pg from "pg";
import { warmUp, warmUpLogged } from "../../../src/composition/warm-up.js";
import { loadConfig } from "../../../src/config/config.js";
import { createHashingEmbedder } from "../../../src/adapters/embedding/hashing-embedder.js";
import { defaultQualityConfig } from "../../../src/domain/quality/quality-config.js";
import type { Embedder } from "../../../src/pipeline/ports.js";

/** A pool that counts the clients it hands out, at once and released; `failing` of them refuse. */
function countingPool(failing = 0) {
  const state = { open: 0, peak: 0, released: 0, refused: 0 };
  const pool = {
    connect: async () => {
      if (state.refused < failing) {
        state.refused += 1;
        throw new Error("connect ECONNREFUSED");
      }
      state.open += 1;
      state.peak = Math.max(state.peak, state.open);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return {
        release: () => {
          state.open -= 1;
          state.released += 1;
        },
      };
    },
  } as unknown as pg.Pool;
  return { pool, state };
}

function countingEmbedder(): { embedder: Embedder; texts: string[] } {
  const inner = createHashingEmbedder();
  const texts: string[] = [];
  return {
    texts,
    embedder: { ...inner, embed: (batch, tenant) => (texts.push(...batch), inner.embed(batch, tenant)) },
  };
}

describe("the warm-up before the consumer joins its group", () => {
  it("runs synthetic failures through the offline generator and the judge, and opens the connections at once", async () => {
    const { pool, state } = countingPool();
    const { embedder, texts } = countingEmbedder();
    const warmed = await warmUp({
      pool,
      connections: 8,
      embedder,
      quality: defaultQualityConfig,
      budgetMs: 10_000,
    });
    expect(warmed.failures).toBe(60);
    // Each failure embeds its task, then the judge its lesson and analysis.
    expect(texts.length).toBe(3 * 60);
    expect(new Set(texts).size).toBeGreaterThan(30);
    expect(warmed.connections).toBe(8);
    expect(state).toMatchObject({ peak: 8, released: 8, open: 0 });
  });

  it("stops at its budget, and a connection refused is no failure of the start", async () => {
    const { pool, state } = countingPool(3);
    const { embedder } = countingEmbedder();
    const warmed = await warmUp({
      pool,
      connections: 5,
      embedder,
      quality: defaultQualityConfig,
      budgetMs: 0,
    });
    expect(warmed.failures).toBe(0);
    expect(warmed.connections).toBe(2);
    expect(state.released).toBe(2);
  });

  it("is skipped at START_WARM_UP_MS=0, and a failing embedder only logs a warning", async () => {
    const { pool, state } = countingPool();
    const logged: string[] = [];
    const logger = {
      info: (_: unknown, msg: string) => logged.push(`info ${msg}`),
      warn: (_: unknown, msg: string) => logged.push(`warn ${msg}`),
    } as never;
    const broken: Embedder = {
      ...createHashingEmbedder(),
      embed: () => Promise.reject(new Error("model missing")),
    };
    await warmUpLogged(loadConfig({ START_WARM_UP_MS: "0" }), { pool, embedder: broken, logger });
    expect(state.peak).toBe(0);
    expect(logged).toEqual([]);
    await warmUpLogged(loadConfig({}), { pool, embedder: broken, logger });
    expect(logged).toEqual(["warn warm-up failed; the pipeline warms up as it goes"]);
    // The connections it opened went back to the pool all the same.
    expect(state).toMatchObject({ peak: 16, released: 16, open: 0 });
  });
});
