import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  staticMetaFile,
  staticRecipe,
  staticTableFile,
} from "../../../../src/adapters/embedding/static-distillation.js";
import { createStaticEmbedder } from "../../../../src/adapters/embedding/static-embedder.js";

const vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "timeout", "query", "hotel", "##s"];

/** A WordPiece tokenizer of eight tokens and a 2-dimensional table: each word its own direction. */
function modelDir(
  rows: number[][] = [
    [0, 0],
    [0, 0],
    [0, 0],
    [0, 0],
    [1, 0],
    [0.8, 0.6],
    [0, 1],
    [0, 0],
  ],
) {
  const dir = mkdtempSync(join(tmpdir(), "reflector-static-"));
  writeFileSync(
    join(dir, "tokenizer.json"),
    JSON.stringify({
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: vocab.slice(0, 4).map((content, id) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: {
        type: "BertNormalizer",
        clean_text: true,
        handle_chinese_chars: true,
        strip_accents: null,
        lowercase: true,
      },
      pre_tokenizer: { type: "BertPreTokenizer" },
      post_processor: null,
      decoder: { type: "WordPiece", prefix: "##", cleanup: true },
      model: {
        type: "WordPiece",
        unk_token: "[UNK]",
        continuing_subword_prefix: "##",
        max_input_chars_per_word: 100,
        vocab: Object.fromEntries(vocab.map((token, id) => [token, id])),
      },
    }),
  );
  writeFileSync(join(dir, staticTableFile), Buffer.from(new Float32Array(rows.flat()).buffer));
  writeFileSync(
    join(dir, staticMetaFile),
    JSON.stringify({
      recipe: staticRecipe,
      dimensions: 2,
      vocabularySize: vocab.length,
      modelBytes: 0,
      corpusChars: 0,
      corpusTokens: 0,
      fingerprint: "0badcafe",
      seconds: 0,
    }),
  );
  return dir;
}

describe("static embedder", () => {
  it("gives a text the normalised mean of its WordPiece tokens' rows, on the calling thread", async () => {
    const embedder = createStaticEmbedder({ modelDir: modelDir() });
    const [timeout, hotels, both, unknown] = await embedder.embed([
      "Timeout",
      "hotels",
      "timeout hotel",
      "zzz",
    ]);
    expect(timeout).toEqual([1, 0]);
    // "hotels" is hotel + ##s, and ##s has a zero row: the mean points at "hotel".
    expect(hotels?.map((v) => Number(v.toFixed(6)))).toEqual([0, 1]);
    expect(both?.map((v) => Number(v.toFixed(6)))).toEqual(
      [Math.SQRT1_2, Math.SQRT1_2].map((v) => Number(v.toFixed(6))),
    );
    expect(unknown).toEqual([0, 0]);
  });

  it("reads at most maxTokens tokens of a text", async () => {
    const embedder = createStaticEmbedder({ modelDir: modelDir(), maxTokens: 1 });
    expect(await embedder.embed(["timeout hotel hotel hotel"])).toEqual([[1, 0]]);
  });

  it("is named after the model and the table's fingerprint, and carries a measured similarity scale", () => {
    const dir = modelDir();
    const embedder = createStaticEmbedder({ modelDir: dir });
    expect(embedder.name).toMatch(/^static:reflector-static-\w+@0badcafe$/);
    expect(embedder.similarityScale?.related).toBeGreaterThan(embedder.similarityScale?.unrelated ?? 1);
  });

  it("fails at start-up, naming the command that makes the table, when it is missing", () => {
    const dir = mkdtempSync(join(tmpdir(), "reflector-no-static-"));
    expect(() => createStaticEmbedder({ modelDir: dir })).toThrow(
      /static embeddings not found: .* lacks tokenizer\.json and static-embeddings\.f32 and static-embeddings\.json\. Make them with `bash scripts\/services\.sh models`/,
    );
  });

  it("refuses a table whose size does not match its meta", () => {
    expect(() => createStaticEmbedder({ modelDir: modelDir([[1, 0]]) })).toThrow(/does not hold 8 vectors/);
  });
});
