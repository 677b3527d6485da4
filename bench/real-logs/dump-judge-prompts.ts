/**
 * Writes the exact chat messages the model judge (`QUALITY_JUDGE=model`) sends for the analyses
 * the held-out model benchmark judges: for every recorded held-out answer
 * (test/fixtures/recorded-answers/held-out/), the answer itself and its `no_cause` variant, one
 * JSON file a prompt, so that a capable model's grades can be recorded once and replayed
 * (test/fixtures/recorded-answers/held-out-judge/, provenance in PROVENANCE.md).
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npx tsx bench/real-logs/dump-judge-prompts.ts <out-dir>
 *
 * The secrets are fixed per prompt (a hash of the failure and the text), so the prompt a replay
 * rebuilds is byte for byte the one that was answered, and its sha256 is written beside it.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildCauseJudgePrompt } from "../../src/adapters/llm/openai-cause-judge.js";
import type { Reflection, TaskCompleted } from "../../src/domain/contracts/index.js";
import { readAnswer } from "../judge.js";
import { loadRealFailures, realLogsDir } from "./real-logs.js";

export const judgedTexts = ["answer", "no_cause"] as const;
export type JudgedText = (typeof judgedTexts)[number];

const fixtures = new URL("../../test/fixtures/recorded-answers/held-out/", import.meta.url);

/** The secrets of one judge prompt, fixed by what it judges. */
export function judgeSecrets(id: string, text: JudgedText) {
  const hash = createHash("sha256").update(`judge:${id}:${text}`).digest("hex");
  return { canary: `canary-${hash.slice(0, 12)}`, nonce: hash.slice(12, 28) };
}

export function judgePromptSha(event: TaskCompleted, reflection: Reflection, id: string, text: JudgedText) {
  const prompt = buildCauseJudgePrompt(event, reflection, judgeSecrets(id, text));
  return {
    prompt,
    sha256: createHash("sha256").update(`${prompt.system}\n${prompt.user}`).digest("hex"),
  };
}

/** Every recorded held-out answer and its no-cause variant, read as the benchmark reads them. */
export function judgedAnalyses(logsDir: string) {
  const failures = new Map(loadRealFailures(logsDir).map((f) => [f.id, f]));
  const promptDir = join(logsDir, "prompts-held-out");
  const out: { file: string; id: string; text: JudgedText; event: TaskCompleted; reflection: Reflection }[] =
    [];
  for (const file of readdirSync(fixtures)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const rec = JSON.parse(readFileSync(new URL(file, fixtures), "utf8")) as {
      id: string;
      content: string;
      variants: { no_cause: string };
    };
    const f = failures.get(rec.id);
    if (!f) continue;
    out.push({
      file,
      id: rec.id,
      text: "answer",
      event: f.event,
      reflection: readAnswer(rec.content, promptDir, file, f.event),
    });
    out.push({
      file,
      id: rec.id,
      text: "no_cause",
      event: f.event,
      reflection: readAnswer(rec.variants.no_cause, promptDir, file, f.event),
    });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  const outDir = process.argv[2];
  const logs = realLogsDir();
  if (!outDir || "absent" in logs) {
    console.error(outDir ? ("absent" in logs ? logs.absent : "") : "usage: dump-judge-prompts.ts <out-dir>");
    process.exit(1);
  }
  mkdirSync(outDir, { recursive: true });
  let n = 0;
  for (const item of judgedAnalyses(logs.dir)) {
    const { prompt, sha256 } = judgePromptSha(item.event, item.reflection, item.id, item.text);
    const name = `${item.file.replace(/\.json$/, "")}.${item.text}.json`;
    writeFileSync(
      join(outDir, name),
      JSON.stringify(
        {
          id: item.id,
          text: item.text,
          promptSha256: sha256,
          messages: [
            { role: "system", content: prompt.system },
            { role: "user", content: prompt.user },
          ],
        },
        null,
        2,
      ),
    );
    n += 1;
  }
  console.log(`${String(n)} judge prompts in ${outDir}`);
}
