import type { LoopDecision, ReflectionOutcome, TaskCompleted, Verdict } from "../domain/contracts/index.js";
import { defaultQualityConfig } from "../domain/quality/quality-config.js";

/** What the demo prints: the table of results, and each reflection's verdict with its reasons. */

/** One published event and what Reflector answered. */
export interface Row {
  order: number;
  example: string;
  step: number;
  event: TaskCompleted;
  outcome?: ReflectionOutcome;
  decision?: LoopDecision;
  expectsOutcome: boolean;
}

export function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

export function printTable(headers: string[], rows: string[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(line(headers));
  console.log(widths.map((w) => "─".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

const inOrder = (rows: Iterable<Row>) => [...rows].sort((a, b) => a.order - b.order);
const label = (r: Row) => (r.step ? `  └ rerun ${String(r.step)}` : r.example);

/** The table of every published event: outcome, verdict, generator, signature, decision. */
export function printResults(rows: Iterable<Row>, runSuffix: string): void {
  printTable(
    ["example", "outcome", "verdict (score)", "generator", "signature", "occ", "decision"],
    inOrder(rows).map((r) => [
      truncate(label(r), 34),
      r.event.outcome,
      r.outcome
        ? `${r.outcome.verdict} (${r.outcome.qualityScore.toFixed(2)})`
        : r.expectsOutcome
          ? "(missing)"
          : "not reflected",
      r.outcome?.generator ?? "",
      r.outcome?.signature ?? "",
      r.outcome ? String(r.outcome.occurrences) : "",
      r.decision
        ? `${r.decision.decision}${r.decision.newLoopId ? ` → ${r.decision.newLoopId.replace(`-${runSuffix}`, "")}` : ""} (${r.decision.reason})`
        : "(missing)",
    ]),
  );
}

/** The lessons stored by this run (new ones; recalled ones were printed when first stored). */
export function printLessons(rows: Iterable<Row>): void {
  console.log("\nLessons stored:");
  for (const r of inOrder(rows)) {
    if (!r.outcome || r.outcome.deduplicated || !r.outcome.stored) continue;
    const lesson = r.outcome.reflection.adjustments[0] ?? r.outcome.reflection.strategyText ?? "";
    console.log(`  ${r.outcome.signature}  ${truncate(lesson, 110)}`);
  }
}

/**
 * Why a reflection got its verdict. A warning or a rejection is explained by the judge's own
 * violations; an `accepted` one by the checks it passed, each against its threshold, since
 * `accepted` means every check passed.
 */
export function verdictReasons(outcome: ReflectionOutcome): string[] {
  const reasons = [...outcome.violations];
  if (outcome.verdict === "accepted") {
    const q = defaultQualityConfig;
    const m = outcome.metrics;
    const check = (name: string, value: number, min: number) =>
      `${name} ${value.toFixed(2)} ≥ ${String(min)}`;
    reasons.push(
      "every check passed: " +
        [
          check("completeness", m.completeness, q.completeness.minThreshold),
          check("depth", m.depthScore, q.depth.minThreshold),
          check("actionability", m.actionabilityScore, q.actionability.minThreshold),
          check("relevance", m.relevanceScore, q.relevance.minThreshold),
          check("novelty", m.noveltyScore, q.novelty.minThreshold),
          m.patternValidity === null
            ? "no patterns claimed"
            : check("patterns proven", m.patternValidity, q.patternValidity.minThreshold),
        ].join(", "),
    );
    if (outcome.generator === "reused" && m.patternValidity !== null)
      reasons.push(
        `its patterns are proven by the lesson's own recurrences (occurrence ${String(outcome.occurrences)}; ${String(q.patternValidity.minOccurrences)} needed)`,
      );
  }
  if (outcome.notStoredReason) reasons.push(`not stored: ${outcome.notStoredReason}`);
  return reasons;
}

/** Every reflection of the run, in order: its verdict, whether it was stored, and why. */
export function printVerdicts(rows: Iterable<Row>): void {
  console.log("\nVerdicts and their reasons, per reflection:");
  for (const r of inOrder(rows)) {
    const o = r.outcome;
    if (!o) continue;
    const what =
      o.generator === "reused"
        ? `recalled lesson ${o.signature}, occurrence ${String(o.occurrences)}, judged again`
        : `written by ${o.generator}${o.stored ? ", stored" : ", not stored"}`;
    console.log(
      `  ${truncate(r.step ? `rerun ${String(r.step)} of ${r.example}` : r.example, 48)}: ${o.verdict} (${what})`,
    );
    for (const reason of verdictReasons(o)) console.log(`    - ${truncate(reason, 200)}`);
  }
}

export type VerdictCounts = Record<Verdict, number>;

/** How many reflections got each verdict; generated and recalled ones apart. */
export function countVerdicts(rows: Iterable<Row>): { generated: VerdictCounts; recalled: VerdictCounts } {
  const empty = (): VerdictCounts => ({ accepted: 0, accepted_with_warnings: 0, rejected: 0 });
  const counts = { generated: empty(), recalled: empty() };
  for (const r of rows) {
    if (!r.outcome) continue;
    counts[r.outcome.generator === "reused" ? "recalled" : "generated"][r.outcome.verdict] += 1;
  }
  return counts;
}

export function formatCounts(counts: VerdictCounts): string {
  return `accepted ${String(counts.accepted)}, accepted_with_warnings ${String(counts.accepted_with_warnings)}, rejected ${String(counts.rejected)}`;
}
