import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { RecordedAnswer } from "../../src/cli/recorded-model-server.js";
import { TaskCompletedV1, type TaskCompleted } from "../../src/domain/contracts/index.js";

/**
 * Answers a capable model gave, once, to the exact requests of the `openai` generator
 * (test/fixtures/recorded-answers/PROVENANCE.md says who answered and how), with the events they
 * answer. `examples/` answers the failures among the committed examples, so any test can replay
 * them; `real/`, `held-out/` and `held-out-24k/` answer failures of public logs that are not in
 * the repository (the benchmarks read those from `REFLECTOR_REAL_LOGS_DIR`).
 */

export type { RecordedAnswer } from "../../src/cli/recorded-model-server.js";

export interface Recording {
  event: TaskCompleted;
  answer: RecordedAnswer;
}

const fixtures = new URL("../fixtures/recorded-answers/", import.meta.url);

export function recordedAnswers(kind: "examples" | "real" | "held-out" | "held-out-24k"): RecordedAnswer[] {
  const dir = new URL(`${kind}/`, fixtures);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(new URL(f, dir), "utf8")) as RecordedAnswer);
}

/** The example failures by the id the recordings use (as bench/real-logs/dump-prompts.ts names them). */
export function exampleFailures(): Map<string, TaskCompleted> {
  const dir = new URL("../../examples/", import.meta.url);
  const out = new Map<string, TaskCompleted>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const doc = JSON.parse(readFileSync(new URL(file, dir), "utf8")) as { events?: unknown[] };
    (doc.events ?? []).forEach((raw, i) => {
      const parsed = TaskCompletedV1.safeParse(raw);
      if (parsed.success && parsed.data.outcome !== "success")
        out.set(`examples/${file.replace(/\.json$/, "")}/${String(i)}`, parsed.data);
    });
  }
  return out;
}

/** Every recorded answer to an example failure, with its event. */
export function exampleRecordings(): Recording[] {
  const events = exampleFailures();
  return recordedAnswers("examples").flatMap((answer) => {
    const event = events.get(answer.id);
    return event ? [{ event, answer }] : [];
  });
}
