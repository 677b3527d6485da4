/**
 * Failure attribution on public, annotated real agent failure logs (see real-logs/real-logs.ts for
 * where they come from): per source and split, how often the offline rules and a capable model's
 * recorded answers name the annotated agent and the annotated step (exact and within two steps).
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npm run bench -- attribution
 *
 * The offline rules were tuned on the `tune` split only; `holdout` is reported on its own. The
 * recorded answers are read from `REFLECTOR_RECORDED_DIR` (default test/fixtures/recorded-answers/real)
 * and parsed with the generator's own parser; their prompts from `REFLECTOR_PROMPTS_DIR` (default
 * `<logs dir>/prompts`, written by `real-logs/dump-prompts.ts <dir> 32000`; run at the commit
 * PROVENANCE.md names, they are byte for byte the prompts answered, which the benchmark checks by
 * sha256; only the "guess shown" line needs those exact ones). Each kind of evidence's precision
 * per split is printed beside its confidence: the offline confidences are set from the tune split.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chooseAttribution } from "../src/adapters/llm/model-attribution.js";
import { hintMinConfidence } from "../src/adapters/llm/prompts.js";
import { parseReflectionOutput } from "../src/adapters/llm/reflection-output.js";
import { locateFailure } from "../src/domain/attribution/attribute-failure.js";
import { attributionConfidence } from "../src/domain/attribution/attribution-confidence.js";
import type { Attribution } from "../src/domain/contracts/index.js";
import {
  loadRealFailures,
  realLogsDir,
  type RealFailure,
  type RealLogSource,
} from "./real-logs/real-logs.js";
import type { BenchResult } from "./support.js";

interface Tally {
  n: number;
  agent: number;
  step: number;
  near: number;
}

const empty = (): Tally => ({ n: 0, agent: 0, step: 0, near: 0 });

function sameAgent(named: string | undefined, label: string | undefined): boolean {
  if (named === undefined || label === undefined) return false;
  return named.trim().toLowerCase() === label.trim().toLowerCase();
}

function add(tally: Tally, failure: RealFailure, attribution: Attribution | undefined): void {
  tally.n += 1;
  if (sameAgent(attribution?.actor, failure.label.agent)) tally.agent += 1;
  const step = attribution?.stepIndex;
  const label = failure.label.step;
  if (step === undefined || label === undefined) return;
  if (step === label) tally.step += 1;
  if (Math.abs(step - label) <= 2) tally.near += 1;
}

const pct = (k: number, n: number) => (n === 0 ? "  —  " : `${((100 * k) / n).toFixed(0).padStart(3)} %`);

function row(name: string, t: Tally): string {
  return `${name.padEnd(44)} n ${String(t.n).padStart(3)}  agent ${pct(t.agent, t.n)} (${String(t.agent)})  step ${pct(t.step, t.n)} (${String(t.step)})  ±2 ${pct(t.near, t.n)} (${String(t.near)})`;
}

export interface RecordedAnswer {
  id: string;
  eventId: string;
  promptFile: string;
  promptSha256?: string;
  content: string;
}

/** Recorded answers (one JSON file each) found in `dir`, or none. */
export function readRecordedAnswers(dir: string): RecordedAnswer[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ ...(JSON.parse(readFileSync(join(dir, f), "utf8")) as RecordedAnswer), promptFile: f }));
}

interface DumpedPrompt {
  id: string;
  eventId: string;
  secrets: { canary: string; nonce: string };
  messages: { role: string; content: string }[];
}

/** The `ruleBasedAttribution.stepIndex` a dumped prompt showed the model, if it showed one. */
function guessOf(prompt: DumpedPrompt): number | undefined {
  const user = prompt.messages.find((m) => m.role === "user")?.content ?? "";
  const at = user.indexOf('"ruleBasedAttribution"');
  if (at < 0) return undefined;
  const step = /"stepIndex": (\d+)/.exec(user.slice(at, at + 200));
  return step ? Number(step[1]) : undefined;
}

/** The step index an answer's `attribution` names as written, before it is read against the trace. */
function namedStep(content: string): number | undefined {
  const at = content.indexOf('"attribution"');
  const step = at < 0 ? null : /"step_?[iI]ndex"\s*:\s*"?(\d{1,6})/.exec(content.slice(at, at + 400));
  return step ? Number(step[1]) : undefined;
}

const sources: RealLogSource[] = [
  "who-and-when/hand-crafted",
  "who-and-when/algorithm-generated",
  "tau-bench/airline",
];

/** Per-basis precision of the offline rules on one split: how often each basis names the annotated step. */
function basisPrecision(failures: readonly RealFailure[]): string[] {
  const byBasis = new Map<
    string,
    { n: number; step: number; near: number; agent: number; confidence: number }
  >();
  for (const f of failures) {
    const located = locateFailure(f.event);
    const key = `${located.basis}@${String(located.attribution.confidence)}`;
    const b = byBasis.get(key) ?? {
      n: 0,
      step: 0,
      near: 0,
      agent: 0,
      confidence: located.attribution.confidence,
    };
    b.n += 1;
    if (located.stepIndex !== undefined && located.stepIndex === f.label.step) b.step += 1;
    if (
      located.stepIndex !== undefined &&
      f.label.step !== undefined &&
      Math.abs(located.stepIndex - f.label.step) <= 2
    )
      b.near += 1;
    if (sameAgent(located.attribution.actor, f.label.agent)) b.agent += 1;
    byBasis.set(key, b);
  }
  return [...byBasis]
    .sort((a, b) => b[1].n - a[1].n)
    .map(
      ([key, b]) =>
        `  ${key.padEnd(28)} n ${String(b.n).padStart(3)}  step ${pct(b.step, b.n)}  ±2 ${pct(b.near, b.n)}  agent ${pct(b.agent, b.n)}`,
    );
}

/** Kinds of evidence that fired at least this often on the tune split have their confidence set from it. */
export const calibrationMinRuns = 10;

/**
 * The offline confidence beside the precision measured on each split, per kind of evidence (all
 * sources pooled: at run time the source is unknown). A kind that fired `calibrationMinRuns` times
 * or more on the tune split and whose confidence is more than 0.05 from its tune precision is
 * marked: its constant in attribution-confidence.ts disagrees with what it measures.
 */
function calibration(failures: readonly RealFailure[]): { lines: string[]; off: string[] } {
  const byBasis = new Map<string, { confidence: number; tune: Tally; holdout: Tally }>();
  for (const f of failures) {
    const { basis, attribution } = locateFailure(f.event);
    const b = byBasis.get(basis) ?? { confidence: 0, tune: empty(), holdout: empty() };
    // A basis with a discount (an orchestrator's report) is listed at its own confidence.
    b.confidence = Math.max(b.confidence, attribution.confidence);
    add(b[f.split], f, attribution);
    byBasis.set(basis, b);
  }
  const off: string[] = [];
  const lines = [...byBasis]
    .sort((a, b) => b[1].tune.n - a[1].tune.n)
    .map(([basis, b]) => {
      const precision = b.tune.n ? b.tune.step / b.tune.n : 0;
      const disagrees = b.tune.n >= calibrationMinRuns && Math.abs(precision - b.confidence) > 0.05;
      if (disagrees) off.push(basis);
      const frac = (t: Tally) => `${String(t.step)}/${String(t.n)} ${pct(t.step, t.n)}`;
      return `  ${basis.padEnd(20)} confidence ${b.confidence.toFixed(2)}  tune ${frac(b.tune).padEnd(12)}  holdout ${frac(b.holdout).padEnd(12)}${disagrees ? "  ← disagrees" : ""}`;
    });
  return { lines, off };
}

/**
 * The rule-based guess the prompt shows today (only at `hintMinConfidence` or more): on how many
 * runs of each split, and how often it names the annotated step there and where it is not shown.
 */
function hintLines(failures: readonly RealFailure[]): string[] {
  return (["tune", "holdout"] as const).map((split) => {
    const shown = empty();
    const hidden = empty();
    for (const f of failures.filter((x) => x.split === split)) {
      const located = locateFailure(f.event);
      add(located.attribution.confidence >= hintMinConfidence ? shown : hidden, f, located.attribution);
    }
    return `  ${split.padEnd(8)} guess shown on ${String(shown.n)} runs, right ${String(shown.step)} (${pct(shown.step, shown.n).trim()}); not shown on ${String(hidden.n)}, it would be right ${String(hidden.step)} (${pct(hidden.step, hidden.n).trim()})`;
  });
}

/** The sha256 the recordings carry: the system message, a line feed, the user message. */
function promptHash(prompt: DumpedPrompt): string {
  const content = (role: string) => prompt.messages.find((m) => m.role === role)?.content ?? "";
  return createHash("sha256")
    .update(`${content("system")}\n${content("user")}`)
    .digest("hex");
}

export function benchAttribution(env: NodeJS.ProcessEnv = process.env): Promise<BenchResult> {
  const where = realLogsDir(env);
  if ("absent" in where) {
    return Promise.resolve({
      name: "failure attribution on real logs",
      lines: [`not measured: ${where.absent}`],
      ratio: 0,
      goal: "offline agent ≥ 50 %, step ≥ 25 %; recorded model agent ≥ 60 %, step ≥ 35 %",
      met: false,
    });
  }
  const failures = loadRealFailures(where.dir).filter((f) => f.label.step !== undefined);
  const lines: string[] = [
    "sources: Who&When (Zhang et al., ICML 2025; github.com/ag2ai/Agents_Failure_Attribution),",
    "         τ-bench gpt-4o airline trajectories (Yao et al. 2024; github.com/sierra-research/tau-bench),",
    "         label = first write call not among the task's expected actions (runs without one left out)",
    "offline rules (no model):",
  ];
  const overall = { tune: empty(), holdout: empty() };
  // τ-bench has one agent: naming it is no feat, so the agent figure that counts is Who&When's.
  const multiAgent = { tune: empty(), holdout: empty() };
  for (const source of sources) {
    for (const split of ["tune", "holdout"] as const) {
      const t = empty();
      for (const f of failures.filter((x) => x.source === source && x.split === split)) {
        const attribution = locateFailure(f.event).attribution;
        add(t, f, attribution);
        add(overall[split], f, attribution);
        if (source.startsWith("who-and-when")) add(multiAgent[split], f, attribution);
      }
      lines.push(row(`  ${source} ${split}`, t));
    }
  }
  lines.push(row("  all sources tune", overall.tune), row("  all sources holdout", overall.holdout));
  const all = empty();
  for (const k of ["n", "agent", "step", "near"] as const) all[k] = overall.tune[k] + overall.holdout[k];
  lines.push(row("  all sources, both splits", all));
  const team = empty();
  for (const k of ["n", "agent", "step", "near"] as const)
    team[k] = multiAgent.tune[k] + multiAgent.holdout[k];
  lines.push(
    row("  Who&When (multi-agent) tune", multiAgent.tune),
    row("  Who&When (multi-agent) holdout", multiAgent.holdout),
    row("  Who&When (multi-agent) both splits", team),
  );
  const calibrated = calibration(failures);
  lines.push(
    "offline confidence against its measured step precision per kind of evidence (all sources):",
    ...calibrated.lines,
    calibrated.off.length === 0
      ? `  every kind that fired ≥ ${String(calibrationMinRuns)} times on tune has its confidence within 0.05 of its tune precision`
      : `  confidence disagrees with tune precision: ${calibrated.off.join(", ")}`,
  );
  lines.push(
    `the rule-based guess in today's prompt (shown at confidence ≥ ${String(hintMinConfidence)}), all sources:`,
    ...hintLines(failures),
  );
  if (env.BENCH_ATTRIBUTION_BASES === "1") {
    for (const split of ["tune", "holdout"] as const) {
      lines.push(`per basis (${split}):`);
      for (const source of sources)
        lines.push(
          ` ${source}`,
          ...basisPrecision(failures.filter((f) => f.source === source && f.split === split)),
        );
    }
  }

  // Recorded answers of a capable model to the exact prompts, parsed by the generator's parser.
  const recordedDir =
    env.REFLECTOR_RECORDED_DIR ??
    fileURLToPath(new URL("../test/fixtures/recorded-answers/real/", import.meta.url));
  const promptsDir = env.REFLECTOR_PROMPTS_DIR ?? join(where.dir, "prompts");
  const recorded = readRecordedAnswers(recordedDir);
  const byId = new Map(failures.map((f) => [f.id, f]));
  const model = { tune: empty(), holdout: empty() };
  const offlineSame = { tune: empty(), holdout: empty() };
  const chosen = { tune: empty(), holdout: empty() };
  const perSource = new Map<string, { model: Tally; offline: Tally; chosen: Tally }>();
  let unparsed = 0;
  // The guess the prompt showed (the rules of the commit the prompts were made at), against the answer.
  const guess = { shown: 0, right: 0, copied: 0, copiedRight: 0, other: 0, otherRight: 0 };
  // Whether the prompts read are the ones the answers were given to, and where the model's step moved.
  const check = { exactPrompts: 0, moved: 0, movedRight: 0, offlineKept: 0, offlineKeptRight: 0 };
  const hintToday = { shown: 0, right: 0, modelNamed: 0 };
  for (const answer of recorded) {
    const failure = byId.get(answer.id);
    if (!failure) continue;
    const promptPath = join(promptsDir, answer.promptFile);
    if (!existsSync(promptPath)) continue;
    const prompt = JSON.parse(readFileSync(promptPath, "utf8")) as DumpedPrompt;
    if (answer.promptSha256 === promptHash(prompt)) check.exactPrompts += 1;
    const system = prompt.messages.find((m) => m.role === "system")?.content ?? "";
    const parsed = parseReflectionOutput(answer.content, prompt.secrets, system, failure.event);
    const attribution = parsed.ok ? parsed.reflection.attribution : undefined;
    if (!parsed.ok) unparsed += 1;
    const located = locateFailure(failure.event);
    const offline = located.attribution;
    const both = chooseAttribution(attribution, offline, located.basis);
    if (offline.confidence >= hintMinConfidence) {
      hintToday.shown += 1;
      if (offline.stepIndex === failure.label.step) hintToday.right += 1;
      if (attribution?.stepIndex === offline.stepIndex) hintToday.modelNamed += 1;
    }
    const named = namedStep(answer.content);
    if (attribution?.stepIndex !== undefined && named !== undefined && named !== attribution.stepIndex) {
      check.moved += 1;
      if (attribution.stepIndex === failure.label.step) check.movedRight += 1;
    }
    if (attribution && both === offline && offline.stepIndex !== attribution.stepIndex) {
      check.offlineKept += 1;
      if (offline.stepIndex === failure.label.step) check.offlineKeptRight += 1;
    }
    add(model[failure.split], failure, attribution);
    add(offlineSame[failure.split], failure, offline);
    add(chosen[failure.split], failure, both);
    const key = `${failure.source} ${failure.split}`;
    const s = perSource.get(key) ?? { model: empty(), offline: empty(), chosen: empty() };
    add(s.model, failure, attribution);
    add(s.offline, failure, offline);
    add(s.chosen, failure, both);
    perSource.set(key, s);
    const shownGuess = guessOf(prompt);
    if (shownGuess !== undefined) {
      guess.shown += 1;
      const right = shownGuess === failure.label.step;
      const modelRight = attribution?.stepIndex === failure.label.step;
      if (right) guess.right += 1;
      if (attribution?.stepIndex === shownGuess) {
        guess.copied += 1;
        if (modelRight) guess.copiedRight += 1;
      } else {
        guess.other += 1;
        if (modelRight) guess.otherRight += 1;
      }
    }
  }
  const modelAll = empty();
  for (const k of ["n", "agent", "step", "near"] as const) modelAll[k] = model.tune[k] + model.holdout[k];
  if (modelAll.n === 0) {
    lines.push(`recorded model answers: none found in ${recordedDir} (with prompts in ${promptsDir})`);
  } else {
    lines.push(
      `recorded capable-model answers (${String(modelAll.n)}, ${String(unparsed)} unparsable), parsed by parseReflectionOutput:`,
    );
    for (const [key, s] of [...perSource].sort((a, b) => a[0].localeCompare(b[0]))) {
      lines.push(
        row(`  ${key} model`, s.model),
        row(`  ${key} offline (same runs)`, s.offline),
        row(`  ${key} stored (chooseAttribution)`, s.chosen),
      );
    }
    const chosenAll = empty();
    for (const k of ["n", "agent", "step", "near"] as const)
      chosenAll[k] = chosen.tune[k] + chosen.holdout[k];
    lines.push(
      row("  model tune", model.tune),
      row("  model holdout", model.holdout),
      row("  model both splits", modelAll),
      row("  offline on the same runs, tune", offlineSame.tune),
      row("  offline on the same runs, holdout", offlineSame.holdout),
      row("  stored attribution, tune", chosen.tune),
      row("  stored attribution, holdout", chosen.holdout),
      row("  stored attribution, both splits", chosenAll),
      `  the rule-based guess shown in those prompts: right ${String(guess.right)} / ${String(guess.shown)}; ` +
        `the model named the guessed step ${String(guess.copied)} times (right ${String(guess.copiedRight)}), ` +
        `another step ${String(guess.other)} times (right ${String(guess.otherRight)})`,
      `  prompts read: ${String(check.exactPrompts)} / ${String(modelAll.n)} are byte for byte the ones answered (sha256); ` +
        `the model's step moved to where its quote is: ${String(check.moved)} (right ${String(check.movedRight)}); ` +
        `the offline step stored over the model's: ${String(check.offlineKept)} (right ${String(check.offlineKeptRight)})`,
      `  today's prompt would show the guess on ${String(hintToday.shown)} of these runs (right ${String(hintToday.right)}); ` +
        `the recorded answer (to the earlier prompt) named that step on ${String(hintToday.modelNamed)}`,
    );
  }
  const agentRate = team.n ? team.agent / team.n : 0;
  const stepRate = all.n ? all.step / all.n : 0;
  const storedAll = empty();
  for (const k of ["n", "agent", "step", "near"] as const) storedAll[k] = chosen.tune[k] + chosen.holdout[k];
  const modelAgent = storedAll.n ? storedAll.agent / storedAll.n : 0;
  // What is stored (`chooseAttribution`) meets the step goal held out too: it was chosen on tune.
  const held = chosen.holdout;
  const modelStep = Math.min(storedAll.n ? storedAll.step / storedAll.n : 0, held.n ? held.step / held.n : 0);
  lines.push(
    `offline confidences now: ${Object.entries(attributionConfidence)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(", ")}`,
  );
  return Promise.resolve({
    name: "failure attribution on real logs (offline rules; recorded capable-model answers)",
    lines,
    ratio: stepRate,
    goal: "offline: Who&When agent ≥ 50 %, all-source step ≥ 25 %; stored with recorded model answers: agent ≥ 60 %, step ≥ 35 % (both splits and held out)",
    met:
      agentRate >= 0.5 && stepRate >= 0.25 && (storedAll.n === 0 || (modelAgent >= 0.6 && modelStep >= 0.35)),
  });
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  const { report } = await import("./support.js");
  report(await benchAttribution());
  process.exit(0);
}
