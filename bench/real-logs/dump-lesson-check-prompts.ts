/**
 * Writes the lesson-check prompts of the lessons-for-task benchmark's queries, one JSON file each
 * ({ name, promptSha256, messages }), into a folder outside the repository, for recording a model's
 * answers to them (test/fixtures/recorded-answers/lesson-check/PROVENANCE.md).
 *
 * `REFLECTOR_REAL_LOGS_DIR=<dir> npx tsx bench/real-logs/dump-lesson-check-prompts.ts <out-dir>`
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildLlm } from "../../src/composition/builders.js";
import { loadConfig } from "../../src/config/config.js";
import { taskQueryText, unitVector } from "../../src/features/lessons/lessons-for-task-rank.js";
import { checkPrompt } from "../lessons-for-task-check.js";
import { benchLessonsAndQueries, now } from "../lessons-for-task.js";
import { realLogsDir } from "./real-logs.js";

const out = process.argv[2];
if (!out) throw new Error("usage: dump-lesson-check-prompts.ts <out-dir>");
const logs = realLogsDir();
if ("absent" in logs) throw new Error(logs.absent);
const { embedder } = buildLlm(loadConfig({}));
const { lessons, queries, note } = await benchLessonsAndQueries(logs.dir, embedder);
if (note) console.log(note);
const vectors = await embedder.embed(queries.map((q) => taskQueryText({ task: q.text })));
mkdirSync(out, { recursive: true });
queries.forEach((q, i) => {
  const vector = unitVector(vectors[i] ?? []);
  if (!vector) throw new Error(`no vector for ${q.name}`);
  const p = checkPrompt({ name: q.name, text: q.text, vector }, lessons, embedder.similarityScale, now);
  writeFileSync(
    join(out, `${q.name.replace(/\//g, "_")}.json`),
    `${JSON.stringify({ name: q.name, promptSha256: p.promptSha256, messages: p.messages }, null, 2)}\n`,
  );
});
console.log(`${String(queries.length)} prompts in ${out}`);
