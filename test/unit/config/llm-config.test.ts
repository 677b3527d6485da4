import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { defaultEmbeddingModelDir } from "../../../src/config/llm-settings.js";
import { buildLlm } from "../../../src/composition/builders.js";

const packageRoot = fileURLToPath(new URL("../../../", import.meta.url));

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("LLM configuration", () => {
  it("defaults to the offline generator and the static vectors of the local model, with unpriced tokens", () => {
    const config = loadConfig({});
    expect(config.generator).toBe("heuristic");
    expect(config.embeddings).toBe("static");
    // Under the package root whatever the cwd: where `scripts/services.sh models` puts it.
    expect(config.embeddingModelDir).toBe(resolve(packageRoot, ".services/models/all-minilm-l6-v2"));
    expect(config.embeddingModelDir).toBe(defaultEmbeddingModelDir);
    expect(config.openai).toMatchObject({
      timeoutMs: 30_000,
      maxRetries: 3,
      inputPricePerMTokUsd: 0,
      outputPricePerMTokUsd: 0,
    });
    // The unit tests do not need the fetched model: the hashing fallback stands in for it here.
    const { generator, embedder } = buildLlm({ ...config, embeddings: "hashing" });
    expect(generator.name).toBe("heuristic");
    expect(embedder.name).toBe("hashing-256");
  });

  it("fails at wiring, naming the fetch command, when the model or its static table is not there", () => {
    const empty = mkdtempSync(join(tmpdir(), "reflector-no-model-"));
    const config = { ...loadConfig({}), embeddingModelDir: empty };
    expect(() => buildLlm(config)).toThrow(
      /static embeddings not found: .* lacks tokenizer\.json and static-embeddings\.f32 and static-embeddings\.json\. Make them with `bash scripts\/services\.sh models`/,
    );
    expect(() => buildLlm({ ...config, embeddings: "local" })).toThrow(
      /local embedding model not found: .* lacks model\.onnx and tokenizer\.json\. Fetch it with `bash scripts\/services\.sh models`/,
    );
  });

  it("names the local embedder after its model directory (stored vectors of two models never mix)", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "reflector-model-")), "my-minilm");
    mkdirSync(dir);
    // The session loads lazily, at the first embed: placeholder files are enough to build it.
    writeFileSync(join(dir, "model.onnx"), "");
    writeFileSync(join(dir, "tokenizer.json"), "{}");
    const config = loadConfig({ REFLECTOR_EMBEDDINGS: "local", REFLECTOR_EMBEDDING_MODEL_DIR: dir });
    expect(config.embeddingModelDir).toBe(dir);
    expect(buildLlm(config).embedder.name).toBe("local:my-minilm");
  });

  it("resolves a relative model directory against the cwd and lists a directory without a model", () => {
    const problems = problemsOf({
      REFLECTOR_EMBEDDING_MODEL_DIR: "no/such/model",
      HTTP_PORT: "99999",
    });
    expect(problems).toEqual([
      expect.stringMatching(/HTTP_PORT/),
      "REFLECTOR_EMBEDDING_MODEL_DIR: no/such/model has no tokenizer.json and static-embeddings.f32",
    ]);
    expect(
      problemsOf({ REFLECTOR_EMBEDDINGS: "local", REFLECTOR_EMBEDDING_MODEL_DIR: "no/such/model" }),
    ).toEqual(["REFLECTOR_EMBEDDING_MODEL_DIR: no/such/model has no model.onnx and tokenizer.json"]);
    // The directory only matters to the local embedder.
    expect(
      problemsOf({ REFLECTOR_EMBEDDINGS: "hashing", REFLECTOR_EMBEDDING_MODEL_DIR: "no/such/model" }),
    ).toEqual([]);
    expect(
      loadConfig({ REFLECTOR_EMBEDDINGS: "hashing", REFLECTOR_EMBEDDING_MODEL_DIR: "models/x" })
        .embeddingModelDir,
    ).toBe(resolve(process.cwd(), "models/x"));
    expect(problemsOf({ REFLECTOR_EMBEDDINGS: "bert" })).toEqual([
      expect.stringMatching(/REFLECTOR_EMBEDDINGS/),
    ]);
  });

  it("reads the openai settings and builds the openai adapters from them", () => {
    const config = loadConfig({
      REFLECTOR_GENERATOR: "openai",
      OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
      REFLECTOR_MODEL: "gpt-test",
      OPENAI_TIMEOUT_MS: "5000",
      OPENAI_MAX_RETRIES: "1",
      LLM_INPUT_PRICE_PER_MTOK_USD: "0.15",
      LLM_OUTPUT_PRICE_PER_MTOK_USD: "0.6",
      LLM_PROMPT_MAX_TOKENS: "8000",
      REFLECTOR_EMBEDDINGS: "openai",
      REFLECTOR_EMBEDDING_MODEL: "text-embedding-3-small",
    });
    expect(config.openai).toEqual({
      apiKey: undefined,
      baseUrl: "http://127.0.0.1:1/v1",
      model: "gpt-test",
      timeoutMs: 5_000,
      maxRetries: 1,
      circuitFailureThreshold: 5,
      circuitOpenMs: 10_000,
      embeddingModel: "text-embedding-3-small",
      evaluatorModel: undefined,
      evaluatorMaxTokens: 500,
      lessonCheckModel: undefined,
      inputPricePerMTokUsd: 0.15,
      outputPricePerMTokUsd: 0.6,
      promptMaxTokens: 8_000,
      maxOutputTokens: 2_000,
    });
    expect(() => loadConfig({ LLM_PROMPT_MAX_TOKENS: "2000" })).toThrow(/LLM_PROMPT_MAX_TOKENS/);
    const { generator, embedder } = buildLlm(config);
    expect(generator.name).toBe("openai");
    expect(embedder.name).toBe("openai:text-embedding-3-small");
  });

  it("lists every missing openai setting at once, together with other problems", () => {
    const problems = problemsOf({
      REFLECTOR_GENERATOR: "openai",
      REFLECTOR_EMBEDDINGS: "openai",
      HTTP_PORT: "99999",
      OPENAI_MAX_RETRIES: "-1",
    });
    expect(problems).toHaveLength(6);
    const text = problems.join("\n");
    expect(text).toMatch(/HTTP_PORT/);
    expect(text).toMatch(/OPENAI_MAX_RETRIES/);
    expect(text).toMatch(/REFLECTOR_GENERATOR=openai needs OPENAI_BASE_URL or OPENAI_API_KEY/);
    expect(text).toMatch(/REFLECTOR_MODEL: REFLECTOR_GENERATOR=openai needs a model name/);
    expect(text).toMatch(/REFLECTOR_EMBEDDINGS=openai needs OPENAI_BASE_URL or OPENAI_API_KEY/);
    expect(text).toMatch(/REFLECTOR_EMBEDDING_MODEL/);
  });

  it("builds the model's lesson check only when asked, and lists what it lacks", () => {
    expect(buildLlm(loadConfig({})).lessonCheck).toBeNull();
    const config = loadConfig({
      LESSONS_FOR_TASK_CHECK: "model",
      OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
      REFLECTOR_MODEL: "gpt-test",
    });
    expect(config.lessonCheck).toBe("model");
    expect(config.lessonCheckTimeoutMs).toBe(5_000);
    expect(config.lessonCheckCandidates).toBe(8);
    expect(() => loadConfig({ LESSONS_FOR_TASK_CHECK_CANDIDATES: "51" })).toThrow(
      /LESSONS_FOR_TASK_CHECK_CANDIDATES/,
    );
    expect(() => loadConfig({ LESSONS_FOR_TASK_CHECK_TIMEOUT_MS: "50" })).toThrow(
      /LESSONS_FOR_TASK_CHECK_TIMEOUT_MS/,
    );
    expect(buildLlm(config).lessonCheck).not.toBeNull();
    expect(problemsOf({ LESSONS_FOR_TASK_CHECK: "model" })).toEqual([
      expect.stringMatching(/^OPENAI_BASE_URL: LESSONS_FOR_TASK_CHECK=model needs/),
      expect.stringMatching(/^REFLECTOR_LESSON_CHECK_MODEL: LESSONS_FOR_TASK_CHECK=model needs/),
    ]);
    expect(
      problemsOf({
        LESSONS_FOR_TASK_CHECK: "model",
        OPENAI_API_KEY: "sk-x",
        REFLECTOR_LESSON_CHECK_MODEL: "small",
      }),
    ).toEqual([]);
    expect(problemsOf({ LESSONS_FOR_TASK_CHECK: "always" })).toEqual([
      expect.stringMatching(/LESSONS_FOR_TASK_CHECK/),
    ]);
  });

  it("accepts an API key alone (the SDK's default endpoint) and rejects unknown generators", () => {
    expect(
      problemsOf({ REFLECTOR_GENERATOR: "openai", OPENAI_API_KEY: "sk-x", REFLECTOR_MODEL: "m" }),
    ).toEqual([]);
    expect(problemsOf({ REFLECTOR_GENERATOR: "claude" })).toEqual([
      expect.stringMatching(/REFLECTOR_GENERATOR/),
    ]);
  });
});
