/**
 * Does the offline attribution hold where nobody tuned it? Per public annotated source (see
 * real-logs/real-logs.ts), the share of failed runs where the offline rules name the annotated
 * agent, the annotated step, and a step within one event of it — beside the trivial rules that
 * ignore the trace (the last event, the first error event, the first and the last agent message;
 * the most common agent, the first and the last agent to speak; a random step and agent, as an
 * expectation) on the same runs, and the lift over the best of them.
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npm run bench -- generalisation
 *
 * Sources are marked `tuned` (the rules' thresholds and confidences were chosen on them) or
 * `held out` (never used to choose anything). The headline is the worst held-out source's lift,
 * not the mean. A leave-one-source-out pass then chooses, for each source in turn, the fallback
 * and the evidence the general rules trust on every other source, and reports it on that one.
 */
import { locateByEvidence, locateFailure } from "../src/domain/attribution/attribute-failure.js";
import {
  defaultCalibration,
  type AttributionCalibration,
  type Reliability,
} from "../src/domain/attribution/calibration.js";
import type { AttributionBasis } from "../src/domain/attribution/located-failure.js";
import {
  agentBaselines,
  baselineAgent,
  baselineStep,
  responsibleAgent,
  stepBaselines,
  type AgentBaseline,
  type StepBaseline,
} from "../src/domain/attribution/trace-baselines.js";
import type { TaskCompleted } from "../src/domain/contracts/index.js";
import { loadRealFailures, realLogsDir, sourceInfo, type RealFailure } from "./real-logs/real-logs.js";
import { report, type BenchResult } from "./support.js";

/** What a rule names for one failed run. */
export interface Named {
  step: number | undefined;
  agent: string | undefined;
}

export interface Score {
  n: number;
  /** Runs whose label names an agent / a step (the denominators). */
  withAgent: number;
  withStep: number;
  agent: number;
  exact: number;
  near: number;
}

const sameAgent = (a: string | undefined, b: string | undefined) =>
  b !== undefined && a?.trim().toLowerCase() === b.trim().toLowerCase();

export function score(failures: readonly RealFailure[], rule: (e: TaskCompleted) => Named): Score {
  const s: Score = { n: 0, withAgent: 0, withStep: 0, agent: 0, exact: 0, near: 0 };
  for (const f of failures) {
    const named = rule(f.event);
    s.n += 1;
    if (f.label.agent !== undefined) {
      s.withAgent += 1;
      if (sameAgent(named.agent, f.label.agent)) s.agent += 1;
    }
    if (f.label.step !== undefined) {
      s.withStep += 1;
      if (named.step === f.label.step) s.exact += 1;
      if (named.step !== undefined && Math.abs(named.step - f.label.step) <= 1) s.near += 1;
    }
  }
  return s;
}

/** A uniformly random step and agent, as an expectation (no draw, so no luck in the table). */
function randomScore(failures: readonly RealFailure[]): { agent: number; exact: number; near: number } {
  let agent = 0;
  let exact = 0;
  let near = 0;
  for (const f of failures) {
    const n = f.event.events.length;
    const step = f.label.step;
    if (step !== undefined && n > 0) {
      exact += 1 / n;
      near += (Math.min(n - 1, step + 1) - Math.max(0, step - 1) + 1) / n;
    }
    const agents = new Set(f.event.events.flatMap((e) => (e.actor === undefined ? [] : [e.actor])));
    if (f.label.agent !== undefined && [...agents].some((a) => sameAgent(a, f.label.agent)))
      agent += 1 / agents.size;
  }
  return { agent, exact, near };
}

export const share = (k: number, n: number) => (n === 0 ? Number.NaN : k / n);
const fmt = (x: number) => (Number.isNaN(x) ? "  —  " : x.toFixed(2));
const signed = (x: number) => (Number.isNaN(x) ? "  —  " : `${x >= 0 ? "+" : ""}${x.toFixed(2)}`);

export interface SourceTable {
  lines: string[];
  /** Rule's within-one minus the best step baseline's within-one; agent minus the best agent baseline. */
  stepLift: number;
  agentLift: number;
}

/** One source's table: the rules under test, then every baseline, then the lift over the best. */
export function sourceTable(
  failures: readonly RealFailure[],
  rules: readonly { name: string; rule: (e: TaskCompleted) => Named }[],
): SourceTable {
  const lines: string[] = [];
  const header = `      ${"rule".padEnd(30)} ${"agent".padStart(6)} ${"exact".padStart(6)} ${"±1".padStart(6)}`;
  lines.push(header);
  const row = (name: string, agent: number, exact: number, near: number) =>
    `      ${name.padEnd(30)} ${fmt(agent).padStart(6)} ${fmt(exact).padStart(6)} ${fmt(near).padStart(6)}`;
  const scored = rules.map((r) => ({ name: r.name, s: score(failures, r.rule) }));
  for (const { name, s } of scored)
    lines.push(row(name, share(s.agent, s.withAgent), share(s.exact, s.withStep), share(s.near, s.withStep)));
  let bestNear = -1;
  let bestNearName = "";
  let bestAgent = -1;
  let bestAgentName = "";
  for (const b of stepBaselines) {
    const s = score(failures, (e) => ({ step: baselineStep(e, b), agent: undefined }));
    const near = share(s.near, s.withStep);
    lines.push(row(`baseline: ${b}`, Number.NaN, share(s.exact, s.withStep), near));
    if (near > bestNear) [bestNear, bestNearName] = [near, b];
  }
  for (const b of agentBaselines) {
    const s = score(failures, (e) => ({ step: undefined, agent: baselineAgent(e, b) }));
    const agent = share(s.agent, s.withAgent);
    lines.push(row(`baseline: ${b}`, agent, Number.NaN, Number.NaN));
    if (agent > bestAgent) [bestAgent, bestAgentName] = [agent, b];
  }
  const random = randomScore(failures);
  const first = scored[0]?.s;
  lines.push(
    row(
      "baseline: random (expected)",
      share(random.agent, first?.withAgent ?? 0),
      share(random.exact, first?.withStep ?? 0),
      share(random.near, first?.withStep ?? 0),
    ),
  );
  const last = scored[scored.length - 1]?.s;
  const stepLift = last ? share(last.near, last.withStep) - bestNear : Number.NaN;
  const agentLift = last ? share(last.agent, last.withAgent) - bestAgent : Number.NaN;
  lines.push(
    `      lift of "${scored[scored.length - 1]?.name ?? ""}": ±1 ${signed(stepLift)} over ${bestNearName} ` +
      `(${fmt(bestNear)}), agent ${signed(agentLift)} over ${bestAgentName} (${fmt(bestAgent)})`,
  );
  return { lines, stepLift, agentLift };
}

/** Each kind of evidence's reliability on these runs: how often the step it found was right. */
export function measureReliability(
  failures: readonly RealFailure[],
  fallback: AttributionCalibration["fallback"] = defaultCalibration.fallback,
): Partial<Record<AttributionBasis, Reliability>> {
  const zero = { n: 0, nStep: 0, nAgent: 0, exact: 0, near: 0, agent: 0, fbNear: 0, fbAgent: 0 };
  const tallies = new Map<AttributionBasis, typeof zero>();
  for (const f of failures) {
    const found = locateByEvidence(f.event);
    if (found.stepIndex === undefined) continue;
    const t = tallies.get(found.basis) ?? { ...zero };
    t.n += 1;
    if (f.label.step !== undefined) {
      t.nStep += 1;
      if (found.stepIndex === f.label.step) t.exact += 1;
      if (Math.abs(found.stepIndex - f.label.step) <= 1) t.near += 1;
      const fb = baselineStep(f.event, fallback.step);
      if (fb !== undefined && Math.abs(fb - f.label.step) <= 1) t.fbNear += 1;
    }
    if (f.label.agent !== undefined) {
      t.nAgent += 1;
      if (sameAgent(responsibleAgent(f.event.events, found.stepIndex), f.label.agent)) t.agent += 1;
      if (sameAgent(baselineAgent(f.event, fallback.agent), f.label.agent)) t.fbAgent += 1;
    }
    tallies.set(found.basis, t);
  }
  const out: Partial<Record<AttributionBasis, Reliability>> = {};
  for (const [basis, t] of tallies) {
    if (basis === "structural_fallback") continue;
    out[basis] = {
      n: Math.min(t.nStep, t.nAgent === 0 ? t.nStep : t.nAgent) || t.n,
      exact: round(share(t.exact, t.nStep) || 0),
      near: round(share(t.near, t.nStep) || 0),
      agent: round(share(t.agent, t.nAgent) || 0),
      fallbackNear: round(share(t.fbNear, t.nStep) || 0),
      fallbackAgent: round(share(t.fbAgent, t.nAgent) || 0),
    };
  }
  return out;
}

const round = (x: number) => Math.round(x * 100) / 100;

/** The step and agent baselines with the best mean over the sources (each source counts once). */
export function chooseFallback(
  sources: readonly (readonly RealFailure[])[],
): AttributionCalibration["fallback"] {
  const mean = (f: (runs: readonly RealFailure[]) => number) => {
    const values = sources.map(f).filter((x) => !Number.isNaN(x));
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
  };
  let step: StepBaseline = "last_event";
  let near = -1;
  let exact = 0;
  for (const b of stepBaselines) {
    const m = mean((runs) => {
      const s = score(runs, (e) => ({ step: baselineStep(e, b), agent: undefined }));
      return share(s.near, s.withStep);
    });
    if (m > near) {
      [step, near] = [b, m];
      exact = mean((runs) => {
        const s = score(runs, (e) => ({ step: baselineStep(e, b), agent: undefined }));
        return share(s.exact, s.withStep);
      });
    }
  }
  let agentRule: AgentBaseline = "most_common_agent";
  let agent = -1;
  for (const b of agentBaselines) {
    const m = mean((runs) => {
      const s = score(runs, (e) => ({ step: undefined, agent: baselineAgent(e, b) }));
      return share(s.agent, s.withAgent);
    });
    if (m > agent) [agentRule, agent] = [b, m];
  }
  const n = sources.reduce((k, runs) => k + runs.length, 0);
  return {
    step,
    agent: agentRule,
    reliability: { n, exact: round(exact), near: round(near), agent: round(agent) },
  };
}

/** The calibration the general rules would ship with if these sources were the ones tuned on. */
export function calibrateOn(sources: readonly (readonly RealFailure[])[]): AttributionCalibration {
  const fallback = chooseFallback(sources);
  return {
    byBasis: measureReliability(sources.flat(), fallback),
    fallback,
    minRuns: defaultCalibration.minRuns,
    heldOut: {},
  };
}

const general =
  (calibration: AttributionCalibration) =>
  (e: TaskCompleted): Named => {
    const located = locateFailure(e, calibration);
    return { step: located.stepIndex, agent: located.attribution.actor };
  };

export function benchGeneralisation(): Promise<BenchResult> {
  return Promise.resolve(generalisation());
}

function generalisation(): BenchResult {
  const lines: string[] = [];
  const say = (line: string) => lines.push(line);
  const where = realLogsDir();
  if ("absent" in where) {
    say(`SKIPPED — ${where.absent}`);
    return { name: "generalisation", lines, ratio: Number.NaN, goal: "per-source lift", met: false };
  }
  const failures = loadRealFailures(where.dir);
  const bySource = new Map<string, RealFailure[]>();
  for (const f of failures) bySource.set(f.source, [...(bySource.get(f.source) ?? []), f]);
  const tuned = [...bySource].filter(([source]) => sourceInfo(source).tuned).map(([, runs]) => runs);
  const heldOut = [...bySource].filter(([source]) => !sourceInfo(source).tuned);

  say("offline attribution per source, beside rules that ignore the trace (shares of labelled runs)");
  say('"general rules (shipped)" is the default: the evidence rules gated by the calibration in');
  say('src/domain/attribution/calibration.ts; "evidence rules alone" is the same chain ungated.');
  const shipped = general(defaultCalibration);
  const rules = [
    { name: "evidence rules alone", rule: evidenceAlone },
    { name: "general rules (shipped)", rule: shipped },
  ];
  let worstStep = Number.POSITIVE_INFINITY;
  let worstAgent = Number.POSITIVE_INFINITY;
  let worstName = "";
  for (const [source, runs] of bySource) {
    const info = sourceInfo(source);
    say("");
    say(`${source} — ${info.tuned ? "TUNED" : "HELD OUT"}; ${String(runs.length)} failed runs; ${info.what}`);
    const table = sourceTable(runs, rules);
    for (const line of table.lines) say(line);
    if (!info.tuned && table.stepLift < worstStep) {
      worstStep = table.stepLift;
      worstName = source;
    }
    if (!info.tuned) worstAgent = Math.min(worstAgent, table.agentLift);
  }

  say("");
  say("calibration chosen on the tuned sources (compare with calibration.ts):");
  const fromTuned = calibrateOn(tuned);
  say(
    `  fallback: step "${fromTuned.fallback.step}" (±1 ${fmt(fromTuned.fallback.reliability.near)}), agent "${fromTuned.fallback.agent}" (${fmt(fromTuned.fallback.reliability.agent)})`,
  );
  for (const [basis, r] of Object.entries(fromTuned.byBasis))
    say(
      `  ${basis}: { n: ${String(r.n)}, exact: ${String(r.exact)}, near: ${String(r.near)}, agent: ${String(r.agent)}, fallbackNear: ${String(r.fallbackNear)}, fallbackAgent: ${String(r.fallbackAgent)} },`,
    );

  say("");
  say("reliability on the held-out sources: each kind's shipped confidence against its precision there");
  for (const [source, runs] of heldOut) {
    const measured = measureReliability(runs, defaultCalibration.fallback);
    for (const [basis, r] of Object.entries(measured)) {
      const shippedR = defaultCalibration.byBasis[basis as AttributionBasis];
      say(
        `  ${source.padEnd(28)} ${basis.padEnd(20)} n ${String(r.n).padStart(3)}  exact ${fmt(r.exact)} (shipped confidence ${fmt(shippedR?.exact ?? Number.NaN)})  ±1 ${fmt(r.near)} (fallback there ${fmt(r.fallbackNear ?? Number.NaN)})  agent ${fmt(r.agent)} (fallback there ${fmt(r.fallbackAgent ?? Number.NaN)})`,
      );
    }
  }

  say("  pooled over the held-out sources (calibration.ts `heldOut`):");
  const pooled = measureReliability(
    heldOut.flatMap(([, runs]) => runs),
    defaultCalibration.fallback,
  );
  for (const [basis, r] of Object.entries(pooled))
    say(
      `    ${basis}: { n: ${String(r.n)}, exact: ${String(r.exact)}, near: ${String(r.near)}, agent: ${String(r.agent)} },`,
    );
  say("");
  say("leave one source out: the calibration chosen on every other source, reported on this one");
  for (const [source, runs] of bySource) {
    const others = [...bySource].filter(([s]) => s !== source).map(([, r]) => r);
    const calibration = calibrateOn(others);
    const s = score(runs, general(calibration));
    const table = sourceTable(runs, [{ name: "general rules (LOSO)", rule: general(calibration) }]);
    say(
      `  ${source.padEnd(34)} agent ${fmt(share(s.agent, s.withAgent))}  exact ${fmt(share(s.exact, s.withStep))}  ±1 ${fmt(share(s.near, s.withStep))}  lift ±1 ${signed(table.stepLift)}  agent ${signed(table.agentLift)}  (fallback ${calibration.fallback.step} / ${calibration.fallback.agent})`,
    );
  }

  const met = heldOut.length > 0 && worstStep >= 0.15 && worstAgent >= 0;
  say("");
  say(
    heldOut.length === 0
      ? "no held-out source found under the folder: nothing is reported where nothing was tuned"
      : `worst held-out lift of the shipped rules: ±1 step ${signed(worstStep)} (${worstName}), agent ${signed(worstAgent)}`,
  );
  return {
    name: "generalisation",
    lines,
    ratio: heldOut.length === 0 ? Number.NaN : worstStep,
    goal: "every held-out source: step ±1 ≥ best baseline + 0.15, agent ≥ best baseline",
    met,
  };
}

const evidenceAlone = (e: TaskCompleted): Named => {
  const located = locateByEvidence(e);
  return {
    step: located.stepIndex,
    agent: located.stepIndex === undefined ? undefined : responsibleAgent(e.events, located.stepIndex),
  };
};

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchGeneralisation());
}
