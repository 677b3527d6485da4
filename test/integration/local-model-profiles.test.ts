import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createLocalEmbedder, missingModelFiles } from "../../src/adapters/embedding/local-embedder.js";
import { modelProfile, type ModelName } from "../../src/domain/embedding/model-profiles.js";
import type { Embedder } from "../../src/pipeline/ports.js";

// The models a profile names besides the default, run from disk (no network). Only the default is
// fetched by the integration tests' global setup; these come with `bash scripts/services.sh models
// <name>` (REFLECTOR_MODELS_DIR: another folder of models than .services/models).
const modelsDir = resolve(
  process.env.REFLECTOR_MODELS_DIR ?? fileURLToPath(new URL("../../.services/models", import.meta.url)),
);

const dot = (a: number[] = [], b: number[] = []) => a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);

const task = "Cancel my flight reservation from New York to Seattle and refund it to the original card.";
const airlineLesson =
  "Before cancelling a reservation, check the fare's cancellation rules and the membership " +
  "level; refund to the original payment method only when the rules allow it.";
const sqlLesson =
  "When a SQL query times out on a large table, add an index on the filtered column and " +
  "paginate the scan instead of raising the statement timeout.";

for (const name of ["e5-small-v2-q", "all-minilm-l6-v2-q"] as ModelName[]) {
  const dir = join(modelsDir, name);
  const missing = missingModelFiles(dir);
  const why = `${dir} lacks ${missing.join(" and ")}: fetch it with \`bash scripts/services.sh models ${name}\``;
  describe.skipIf(missing.length > 0)(
    `local model ${name}${missing.length > 0 ? ` (skipped: ${why})` : ""}`,
    () => {
      const profile = modelProfile(name);
      // Made at the first test: a skipped block's body still runs, and the embedder refuses a missing model.
      let made: Embedder | undefined;
      const embedder = () => (made ??= createLocalEmbedder({ modelDir: dir, profile }));

      it("is named after its folder and carries its profile's scale", () => {
        expect(embedder().name).toBe(`local:${name}`);
        expect(embedder().similarityScale).toEqual(profile.similarityScale);
      });

      it("embeds a query and passages as 384-dimensional unit vectors", async () => {
        const [query] = await embedder().embed([task], undefined, "query");
        const passages = await embedder().embed([airlineLesson, sqlLesson]);
        for (const vector of [query, ...passages]) {
          expect(vector).toHaveLength(384);
          expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 5);
        }
        // The lesson about the task is nearer than the unrelated one.
        expect(dot(query, passages[0])).toBeGreaterThan(dot(query, passages[1]) + 0.02);
      });

      it("reads a query and a passage of the same words apart only when the model has prefixes", async () => {
        const [asQuery] = await embedder().embed([task], undefined, "query");
        const [asPassage] = await embedder().embed([task], undefined, "passage");
        if (profile.prefixes.query === profile.prefixes.passage)
          expect(dot(asQuery, asPassage)).toBeCloseTo(1, 5);
        else expect(dot(asQuery, asPassage)).toBeLessThan(0.999);
      });

      it("gives a text the same vector alone as with others (an int8 model runs one text at a time)", async () => {
        const texts = [task, "ok", sqlLesson];
        const together = await embedder().embed(texts);
        for (const [i, text] of texts.entries()) {
          const [alone] = await embedder().embed([text]);
          expect(dot(alone, together[i]), text).toBeCloseTo(1, 5);
        }
      });
    },
  );
}
