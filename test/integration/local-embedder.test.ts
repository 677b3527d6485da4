import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLocalEmbedder } from "../../src/adapters/embedding/local-embedder.js";
import { defaultEmbeddingModelDir } from "../../src/config/llm-settings.js";

// Runs the real model from disk (no network); it lives here rather than in the unit project because
// the model is fetched by the integration tests' global setup (scripts/services.sh models).
const embedder = createLocalEmbedder({ modelDir: defaultEmbeddingModelDir });

const dot = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
const norm = (a: number[]) => Math.sqrt(dot(a, a));

const bookingTask =
  "Book a hotel room in Lisbon for three nights from 12 March for two adults, under 150 EUR a night.";
const bookingFailure =
  "The agent could not complete the hotel reservation: the booking service rejected the dates " +
  "and the agent never retried with other nights, so no room was reserved.";
const sqlLesson =
  "When a SQL query times out on a large table, add an index on the filtered column and " +
  "paginate the scan instead of raising the statement timeout.";

describe("local embedder (all-MiniLM-L6-v2, ONNX)", () => {
  it("is named after its model, so the store never mixes its vectors with another embedder's", () => {
    expect(embedder.name).toBe("local:all-minilm-l6-v2");
  });

  it("gives 384-dimensional vectors of length 1, and nothing for no texts", async () => {
    expect(await embedder.embed([])).toEqual([]);
    const vectors = await embedder.embed([bookingTask, "", "ok"]);
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toHaveLength(384);
      expect(norm(vector)).toBeCloseTo(1, 5);
      expect(vector.every(Number.isFinite)).toBe(true);
    }
  });

  it("gives a text the same vector in a padded batch as alone", async () => {
    const texts = [bookingTask, "SQL timeout", sqlLesson, bookingFailure, "a"];
    const batched = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      const inBatch = batched[i] ?? [];
      const worst = Math.max(...(alone ?? []).map((value, d) => Math.abs(value - (inBatch[d] ?? NaN))));
      expect(worst, text).toBeLessThan(1e-4);
    }
  });

  it("scores a failure analysis of a task far closer to that task than an unrelated lesson", async () => {
    const [task, failure, lesson] = await embedder.embed([bookingTask, bookingFailure, sqlLesson]);
    if (!task || !failure || !lesson) throw new Error("missing vectors");
    const related = dot(task, failure);
    const unrelated = dot(task, lesson);
    // Measured: 0.385 and 0.077 (docs/benchmarks.md); hashing gives both near 0.
    expect(related).toBeGreaterThan(0.3);
    expect(unrelated).toBeLessThan(0.15);
    expect(related - unrelated).toBeGreaterThan(0.25);
    // Meaning, not words: a paraphrase that shares almost no word with the task is still close.
    const [paraphrase] = await embedder.embed([
      "Reserve accommodation in Portugal's capital for a long weekend.",
    ]);
    expect(dot(task, paraphrase ?? [])).toBeGreaterThan(unrelated + 0.3);
  });

  it("cuts texts longer than its token limit instead of failing", async () => {
    const long = `${bookingTask} ${"and then the agent waited again ".repeat(400)}`;
    const [head, cut] = await createLocalEmbedder({
      modelDir: defaultEmbeddingModelDir,
      maxTokens: 16,
    }).embed([bookingTask, long]);
    // Both are cut to the same first 15 tokens and [SEP]: the same vector.
    expect(dot(head ?? [], cut ?? [])).toBeCloseTo(1, 4);
    const [full] = await embedder.embed([long]);
    expect(full).toHaveLength(384);
  });

  it("refuses to start without its model and names the command that fetches it", () => {
    const empty = mkdtempSync(join(tmpdir(), "reflector-no-model-"));
    expect(() => createLocalEmbedder({ modelDir: empty })).toThrow(
      /lacks model\.onnx and tokenizer\.json.*bash scripts\/services\.sh models/,
    );
  });
});
