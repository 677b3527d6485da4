/**
 * What the `openai` generator's prompt shows of real failed runs, per source and prompt budget:
 * how often the annotated decisive step is in the prompt (shown at all; shown whole), how often the
 * whole run is, and what that costs in prompt tokens per failure. Tuned and held-out sources are
 * marked; the goal reads the tuned long runs (Who&When hand-crafted, 5–130 steps), and the held-out
 * ones report it. Whether a larger budget makes a model find the step more often is
 * `held-out-model`'s question (recorded answers at two budgets), not this table's.
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npm run bench -- prompt-coverage
 */
import { buildReflectionPrompt, defaultPromptMaxTokens } from "../src/adapters/llm/prompts.js";
import { defaultQualityConfig } from "../src/domain/quality/quality-config.js";
import { loadRealFailures, realLogsDir, sourceInfo, type RealFailure } from "./real-logs/real-logs.js";
import type { BenchResult } from "./support.js";

const secrets = { canary: "canary-bench", nonce: "0123456789abcdef" };

interface Shown {
  index?: number;
  content?: string;
}

/** The steps a prompt shows, read back from its data block. */
function shownSteps(user: string): Shown[] {
  const open = user.indexOf(`<trace-data-${secrets.nonce}>`);
  const close = user.indexOf(`</trace-data-${secrets.nonce}>`);
  const data = JSON.parse(user.slice(open + secrets.nonce.length + 13, close)) as { events: Shown[] };
  return data.events.filter((e) => e.index !== undefined);
}

interface Row {
  n: number;
  inPrompt: number;
  whole: number;
  wholeRun: number;
  tokens: number[];
}

function measure(failures: readonly RealFailure[], maxTokens: number): Row {
  const row: Row = { n: 0, inPrompt: 0, whole: 0, wholeRun: 0, tokens: [] };
  for (const f of failures) {
    const label = f.label.step;
    if (label === undefined) continue;
    const request = {
      event: f.event,
      attempt: 1,
      violations: [],
      missingFields: [],
      insights: [],
      answerEvaluation: null,
    };
    const prompt = buildReflectionPrompt(request, secrets, defaultQualityConfig.guidance, { maxTokens });
    const shown = shownSteps(prompt.user);
    const step = shown.find((s) => s.index === label);
    row.n += 1;
    if (step) row.inPrompt += 1;
    if (step && step.content === f.event.events[label]?.content) row.whole += 1;
    if (
      shown.length === f.event.events.length &&
      shown.every((s, i) => s.content === f.event.events[i]?.content)
    )
      row.wholeRun += 1;
    row.tokens.push(prompt.estimatedTokens);
  }
  return row;
}

const pct = (k: number, n: number) => `${((100 * k) / Math.max(1, n)).toFixed(0).padStart(3)} %`;
const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

export const budgets = [6_000, 12_000, 16_000, 24_000, 32_000, 48_000];

export function benchPromptCoverage(env: NodeJS.ProcessEnv = process.env): Promise<BenchResult> {
  const where = realLogsDir(env);
  const goal =
    "annotated step in the prompt for ≥ 95 % of long real runs (Who&When hand-crafted) at the default budget";
  if ("absent" in where)
    return Promise.resolve({
      name: "prompt coverage of real runs",
      lines: [`not measured: ${where.absent}`],
      ratio: 0,
      goal,
      met: false,
    });
  const failures = loadRealFailures(where.dir);
  const lines: string[] = [
    "budget = LLM_PROMPT_MAX_TOKENS (estimated tokens, token-estimate.ts); step in = the annotated step is shown;",
    "step whole = shown uncut; run whole = every step shown uncut; tokens = the first request's estimate per failure",
  ];
  // The default was chosen on the tuned sources' long runs; the held-out ones report it.
  let ratio = 0;
  let worstHeldOut = 1;
  for (const source of [...new Set(failures.map((f) => f.source))]) {
    const group = failures.filter((f) => f.source === source);
    lines.push(`${source} (${sourceInfo(source).tuned ? "tuned" : "held out"}):`);
    for (const maxTokens of budgets) {
      const r = measure(group, maxTokens);
      if (r.n === 0) continue;
      if (maxTokens === defaultPromptMaxTokens) {
        if (source === "who-and-when/hand-crafted") ratio = r.inPrompt / r.n;
        if (!sourceInfo(source).tuned) worstHeldOut = Math.min(worstHeldOut, r.inPrompt / r.n);
      }
      const mean = r.tokens.reduce((a, b) => a + b, 0) / Math.max(1, r.tokens.length);
      lines.push(
        `  ${String(maxTokens).padStart(6)}${maxTokens === defaultPromptMaxTokens ? " (default)" : "          "}  n ${String(r.n).padStart(3)}  step in ${pct(r.inPrompt, r.n)}  step whole ${pct(r.whole, r.n)}  run whole ${pct(r.wholeRun, r.n)}  tokens mean ${mean.toFixed(0).padStart(6)}  p50 ${String(quantile(r.tokens, 0.5)).padStart(6)}  p90 ${String(quantile(r.tokens, 0.9)).padStart(6)}  max ${String(Math.max(...r.tokens)).padStart(6)}`,
      );
    }
  }
  lines.push(
    `worst held-out source at the default budget: step in ${pct(Math.round(worstHeldOut * 1000), 1000)}`,
  );
  return Promise.resolve({
    name: `prompt coverage of real runs (default LLM_PROMPT_MAX_TOKENS ${String(defaultPromptMaxTokens)})`,
    lines,
    ratio,
    goal,
    met: ratio >= 0.95,
  });
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  const { report } = await import("./support.js");
  report(await benchPromptCoverage());
  process.exit(0);
}
