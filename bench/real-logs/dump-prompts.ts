/**
 * Writes the exact chat messages Reflector's `openai` generator sends for a fixed sample of real
 * failures (and for the failures among the repository's own examples), one JSON file a prompt, so
 * that a capable model's answers to them can be recorded once and replayed (bench/recorded/).
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npx tsx bench/real-logs/dump-prompts.ts <out-dir> [maxTokens]
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npx tsx bench/real-logs/dump-prompts.ts <out-dir> [maxTokens] --held-out
 *
 * With `--held-out`, the sample is `heldOutSample`: eight failures of every held-out source (none
 * of the tuned sources, no examples).
 *
 * The secrets (canary, nonce) are fixed per prompt and written beside it: a replay answers by the
 * event id, whatever secrets a later run draws.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildReflectionPrompt, defaultPromptMaxTokens } from "../../src/adapters/llm/prompts.js";
import { TaskCompletedV1, type TaskCompleted } from "../../src/domain/contracts/index.js";
import { defaultQualityConfig } from "../../src/domain/quality/quality-config.js";
import { loadRealFailures, realLogsDir, sourceInfo, type RealFailure } from "./real-logs.js";

const perSplit = 6;

const rank = (id: string) => createHash("sha256").update(`sample:${id}`).digest("hex");

/** Six tuning and six held-out failures of every source, chosen by a hash of their ids. */
export function recordingSample(failures: readonly RealFailure[]): RealFailure[] {
  const out: RealFailure[] = [];
  for (const source of new Set(failures.map((f) => f.source))) {
    for (const split of ["tune", "holdout"] as const) {
      const pool = failures
        .filter((f) => f.source === source && f.split === split && f.label.step !== undefined)
        .sort((a, b) => rank(a.id).localeCompare(rank(b.id)));
      // τ-bench repeats each task four times: one failure per task.
      const seen = new Set<string>();
      for (const f of pool) {
        if (out.filter((o) => o.source === source && o.split === split).length >= perSplit) break;
        if (seen.has(f.taskKey)) continue;
        seen.add(f.taskKey);
        out.push(f);
      }
    }
  }
  return out;
}

const perHeldOutSource = 8;

/** Eight failures of every source nothing was tuned on, chosen by a hash of their ids. */
export function heldOutSample(failures: readonly RealFailure[]): RealFailure[] {
  const out: RealFailure[] = [];
  for (const source of new Set(failures.map((f) => f.source))) {
    if (sourceInfo(source).tuned) continue;
    out.push(
      ...failures
        .filter((f) => f.source === source && f.label.step !== undefined)
        .sort((a, b) => rank(a.id).localeCompare(rank(b.id)))
        .slice(0, perHeldOutSource),
    );
  }
  return out;
}

function exampleFailures(): { id: string; event: TaskCompleted }[] {
  const dir = new URL("../../examples/", import.meta.url);
  const out: { id: string; event: TaskCompleted }[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const doc = JSON.parse(readFileSync(new URL(file, dir), "utf8")) as { events?: unknown[] };
    (doc.events ?? []).forEach((raw, i) => {
      const parsed = TaskCompletedV1.safeParse(raw);
      if (parsed.success && parsed.data.outcome !== "success")
        out.push({ id: `examples/${file.replace(/\.json$/, "")}/${String(i)}`, event: parsed.data });
    });
  }
  return out;
}

const args = process.argv.slice(2).filter((a) => a !== "--held-out");
const heldOut = process.argv.includes("--held-out");
const outDir = args[0];
if (!outDir) throw new Error("usage: dump-prompts.ts <out-dir> [maxTokens] [--held-out]");
const maxTokens = Number(args[1] ?? defaultPromptMaxTokens);
const where = realLogsDir();
if ("absent" in where) throw new Error(where.absent);
const guidance = defaultQualityConfig.guidance;
const items = heldOut
  ? heldOutSample(loadRealFailures(where.dir)).map((f) => ({ id: f.id, event: f.event }))
  : [
      ...recordingSample(loadRealFailures(where.dir)).map((f) => ({ id: f.id, event: f.event })),
      ...exampleFailures(),
    ];
mkdirSync(outDir, { recursive: true });
for (const { id, event } of items) {
  const secrets = {
    canary: `canary-${rank(id).slice(0, 12)}`,
    nonce: rank(`nonce:${id}`).slice(0, 16),
  };
  const request = {
    event,
    attempt: 1,
    violations: [],
    missingFields: [],
    insights: [],
    answerEvaluation: null,
  };
  const prompt = buildReflectionPrompt(request, secrets, guidance, { maxTokens });
  const file = join(outDir, `${id.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        id,
        eventId: event.eventId,
        maxTokens,
        estimatedTokens: prompt.estimatedTokens,
        secrets,
        messages: [
          { role: "system", content: prompt.system },
          { role: "user", content: prompt.user },
        ],
      },
      null,
      2,
    ),
  );
  console.log(`${id}\t${String(prompt.estimatedTokens)} tokens`);
}
