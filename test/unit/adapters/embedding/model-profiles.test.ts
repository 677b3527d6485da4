import { describe, expect, it } from "vitest";
import { createCachedEmbedder } from "../../../../src/adapters/embedding/cached-embedder.js";
import { pool } from "../../../../src/adapters/embedding/local-model.js";
import {
  defaultModelName,
  modelNames,
  modelProfile,
  modelProfiles,
  prefixed,
} from "../../../../src/domain/embedding/model-profiles.js";
import { loadConfig } from "../../../../src/config/config.js";
import { createLessonIndex } from "../../../../src/features/lessons/lessons-for-task-index.js";
import {
  createLessonsForTask,
  LessonsForTaskBody,
} from "../../../../src/features/lessons/lessons-for-task.js";
import type { EmbedRole, Embedder } from "../../../../src/pipeline/ports.js";

describe("local model profiles", () => {
  it("keeps the default exactly as it ran before profiles: mean pooling, no prefixes, 256 tokens, batched", () => {
    const p = modelProfile(defaultModelName);
    expect(p).toMatchObject({
      name: "all-minilm-l6-v2",
      pooling: "mean",
      prefixes: { query: "", passage: "" },
      maxTokens: 256,
      quantised: false,
      similarityScale: { unrelated: 0.15, related: 0.5 },
    });
    expect(prefixed(p, "query", ["a task"])).toEqual(["a task"]);
    expect(prefixed(p, "passage", ["a lesson"])).toEqual(["a lesson"]);
  });

  it("puts e5's query and passage prefixes before the texts of each role", () => {
    const e5 = modelProfile("e5-small-v2-q");
    expect(prefixed(e5, "query", ["book a flight", ""])).toEqual(["query: book a flight", "query: "]);
    expect(prefixed(e5, "passage", ["check the fare first"])).toEqual(["passage: check the fare first"]);
  });

  it("names every profile by its key, each fetched from a pinned LangChain4j artifact", () => {
    for (const name of modelNames) {
      expect(modelProfiles[name].name).toBe(name);
      expect(modelProfiles[name].artifact).toMatch(`dev.langchain4j:langchain4j-embeddings-${name}:`);
    }
  });

  it("refuses an unknown model with the names there are", () => {
    expect(() => modelProfile("bge-small-en-v15-q")).toThrow(
      /unknown local embedding model bge-small-en-v15-q: one of all-minilm-l6-v2/,
    );
  });
});

describe("pooling token vectors into one unit vector", () => {
  // Two texts of a run padded to 3 tokens, width 2: the first has 3 tokens, the second 2 and a pad.
  const hidden = [3, 0, 0, 4, 3, 4, /* second text */ 0, 2, 2, 0, 100, 100];
  const shape = { length: 3, width: 2 };

  it("mean: averages a text's own tokens, its padding left out", () => {
    const [first, second] = pool(hidden, shape, [3, 2], "mean");
    // (3+0+3, 0+4+4)/3 = (2, 8/3) → length 1.
    expect(first?.[0]).toBeCloseTo(2 / Math.hypot(2, 8 / 3), 10);
    expect(first?.[1]).toBeCloseTo(8 / 3 / Math.hypot(2, 8 / 3), 10);
    // (0+2, 2+0)/2 = (1, 1): the pad (100, 100) does not count.
    expect(second?.[0]).toBeCloseTo(Math.SQRT1_2, 10);
    expect(second?.[1]).toBeCloseTo(Math.SQRT1_2, 10);
  });

  it("cls: takes the first token's vector alone", () => {
    const [first, second] = pool(hidden, shape, [3, 2], "cls");
    expect(first).toEqual([1, 0]);
    expect(second).toEqual([0, 1]);
  });

  it("leaves a zero vector zero rather than dividing by nothing", () => {
    expect(pool([0, 0], { length: 1, width: 2 }, [1], "mean")).toEqual([[0, 0]]);
  });
});

describe("queries and passages through the cache", () => {
  it("passes the role on and keeps a query's vector apart from a passage's of the same words", async () => {
    const calls: { texts: string[]; role: EmbedRole | undefined }[] = [];
    const inner: Embedder = {
      name: "fake",
      embed: (texts, _tenant, role) => {
        calls.push({ texts, role });
        return Promise.resolve(texts.map(() => [role === "query" ? 1 : 0, 1]));
      },
    };
    const cached = createCachedEmbedder(inner);
    expect(await cached.embed(["same words"], "t1", "query")).toEqual([[1, 1]]);
    expect(await cached.embed(["same words"])).toEqual([[0, 1]]);
    expect(await cached.embed(["same words"], "t1", "query")).toEqual([[1, 1]]);
    expect(calls).toEqual([
      { texts: ["same words"], role: "query" },
      { texts: ["same words"], role: "passage" },
    ]);
  });
});

describe("lessons for a task", () => {
  it("embeds the task as a query, for a model that reads queries and passages apart", async () => {
    const roles: (EmbedRole | undefined)[] = [];
    const embedder: Embedder = {
      name: "fake",
      embed: (texts, _tenant, role) => {
        roles.push(role);
        return Promise.resolve(texts.map(() => [1, 0]));
      },
    };
    const clock = { now: () => new Date("2026-12-05T07:00:00Z") };
    const source = {
      lessonVersion: () => Promise.resolve({ count: 0, latest: null }),
      lessonVectors: () => Promise.resolve([]),
    };
    const service = createLessonsForTask({
      index: createLessonIndex({ source, embeddingModel: "fake", clock }),
      embedder,
      clock,
    });
    await service.forTask("t1", LessonsForTaskBody.parse({ task: "cancel my flight" }));
    expect(roles).toEqual(["query"]);
  });
});

describe("REFLECTOR_EMBEDDING_MODEL for the local embedder", () => {
  it("defaults to all-MiniLM-L6-v2 in its usual folder", () => {
    const config = loadConfig({ REFLECTOR_EMBEDDINGS: "local" });
    expect(config.localEmbeddingModel).toBe("all-minilm-l6-v2");
    expect(config.embeddingModelDir).toMatch(/\/\.services\/models\/all-minilm-l6-v2$/);
  });

  it("names a profile, whose folder is the model's own under .services/models", () => {
    const config = loadConfig({ REFLECTOR_EMBEDDINGS: "local", REFLECTOR_EMBEDDING_MODEL: "e5-small-v2-q" });
    expect(config.localEmbeddingModel).toBe("e5-small-v2-q");
    expect(config.embeddingModelDir).toMatch(/\/\.services\/models\/e5-small-v2-q$/);
  });

  it("refuses a model no profile describes", () => {
    expect(() =>
      loadConfig({ REFLECTOR_EMBEDDINGS: "local", REFLECTOR_EMBEDDING_MODEL: "bge-large" }),
    ).toThrow(
      /REFLECTOR_EMBEDDING_MODEL: REFLECTOR_EMBEDDINGS=local runs one of all-minilm-l6-v2, all-minilm-l6-v2-q, e5-small-v2-q, not bge-large/,
    );
  });

  it("is the remote model's name for the openai embedder, and leaves the local profile alone", () => {
    const config = loadConfig({
      REFLECTOR_EMBEDDINGS: "openai",
      REFLECTOR_EMBEDDING_MODEL: "text-embedding-3-small",
      OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
    });
    expect(config.localEmbeddingModel).toBe("all-minilm-l6-v2");
  });
});
