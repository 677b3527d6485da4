/**
 * Makes the static token table next to the local model (`npm run models` runs it; it is skipped
 * while the table is current): `tsx scripts/distil-embeddings.ts <model dir> [--force] [--corpus-chars=N]`.
 * The reading corpus is the prose of the installed packages' documentation (node_modules).
 */
import { fileURLToPath } from "node:url";
import {
  distilStaticTable,
  readDocsCorpus,
  staticTableCurrent,
} from "../src/adapters/embedding/static-distillation.js";

const [modelDir, ...flags] = process.argv.slice(2);
const flag = flags.includes("--force") ? "--force" : undefined;
/** About a million characters (~260,000 tokens): a minute or two of the model on two cores. */
const charsFlag = flags.find((f) => f.startsWith("--corpus-chars="));
const corpusChars = charsFlag ? Number(charsFlag.slice("--corpus-chars=".length)) : 1_000_000;
if (!modelDir) {
  console.error("usage: tsx scripts/distil-embeddings.ts <model dir> [--force] [--corpus-chars=N]");
  process.exit(2);
}
if (flag !== "--force" && staticTableCurrent(modelDir)) {
  console.error(`[models] the static token table in ${modelDir} is current`);
} else {
  const corpus = readDocsCorpus(fileURLToPath(new URL("../node_modules", import.meta.url)), corpusChars);
  const shown = new Map<string, number>();
  const meta = await distilStaticTable(modelDir, {
    corpus,
    onProgress(step, done, total) {
      const last = shown.get(step) ?? 0;
      if (done - last >= total / 5 || (done === total && last !== total)) {
        shown.set(step, done);
        console.error(
          `[models] distilling static token vectors, ${step}: ${String(done)} / ${String(total)}`,
        );
      }
    },
  });
  console.error(
    `[models] static token table ${meta.fingerprint}: ${String(meta.vocabularySize)} tokens × ${String(meta.dimensions)} dimensions, ` +
      `${String(meta.corpusTokens)} corpus tokens, in ${String(meta.seconds)} s`,
  );
}
