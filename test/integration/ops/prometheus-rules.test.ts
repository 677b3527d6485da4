import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ensurePromtool, promtool } from "../../support/promtool.js";

/**
 * The alert rules checked and unit-tested by Prometheus's own promtool: the rules load, and
 * ops/prometheus/reflector-rules.test.yaml shows every alert firing on synthetic series (with
 * its labels and rendered annotations) and staying quiet on the other side of its threshold.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url));
const rulesPath = `${root}ops/prometheus/reflector-rules.yaml`;
const testsPath = `${root}ops/prometheus/reflector-rules.test.yaml`;

interface RulesFile {
  groups: { rules: { alert?: string }[] }[];
}
interface RuleTests {
  tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}

describe("Prometheus rules under promtool", () => {
  let bin: string;
  let scratch: string;
  beforeAll(() => {
    bin = ensurePromtool();
    scratch = mkdtempSync(`${tmpdir()}/reflector-rules-`);
  }, 600_000);
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  const alerts = (parse(readFileSync(rulesPath, "utf8")) as RulesFile).groups
    .flatMap((g) => g.rules)
    .map((r) => r.alert ?? "");

  it("loads every rule (promtool check rules)", () => {
    const check = promtool(bin, ["check", "rules", rulesPath]);
    expect(check.status, check.output).toBe(0);
    expect(check.output).toContain(`SUCCESS: ${alerts.length} rules found`);
  });

  it("passes the alert unit tests (promtool test rules)", () => {
    const run = promtool(bin, ["test", "rules", testsPath]);
    expect(run.status, run.output).toBe(0);
    expect(run.output).toContain("SUCCESS");
  });

  it("shows every alert firing at least once", () => {
    const tests = parse(readFileSync(testsPath, "utf8")) as RuleTests;
    const fired = new Set(
      tests.tests
        .flatMap((t) => t.alert_rule_test ?? [])
        .filter((t) => (t.exp_alerts ?? []).length > 0)
        .map((t) => t.alertname),
    );
    expect(alerts.filter((name) => !fired.has(name))).toEqual([]);
  });

  it("fails the unit tests when an alert threshold drifts (the tests can fail)", () => {
    const drifted = readFileSync(rulesPath, "utf8").replace(
      "sum(rate(reflector_reflection_quality_score_count[1h])) < 0.6",
      "sum(rate(reflector_reflection_quality_score_count[1h])) < 0.5",
    );
    expect(drifted).not.toBe(readFileSync(rulesPath, "utf8"));
    writeFileSync(`${scratch}/reflector-rules.yaml`, drifted);
    copyFileSync(testsPath, `${scratch}/reflector-rules.test.yaml`);
    const run = promtool(bin, ["test", "rules", `${scratch}/reflector-rules.test.yaml`]);
    expect(run.status).not.toBe(0);
    expect(run.output).toMatch(/alertname: ReflectorQualityScoreLow/);
  });
});
