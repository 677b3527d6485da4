import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createHttpMetrics } from "../../../src/http/request-observer.js";
import { createConsumerMetrics } from "../../../src/observability/consumer-metrics.js";
import { createFeedbackMetrics } from "../../../src/observability/feedback-metrics.js";
import { createSpendMetrics } from "../../../src/observability/spend-metrics.js";
import { createLagMetrics } from "../../../src/observability/lag-metrics.js";
import { createLlmMetrics } from "../../../src/observability/llm-metrics.js";
import { createMetrics } from "../../../src/observability/metrics.js";
import { createQualityMetrics } from "../../../src/observability/quality-metrics.js";
import { exportedSeriesNames, metricNamesIn, unknownMetrics } from "../../support/promql-metrics.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, "utf8");

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RulesFile {
  groups: { name: string; rules: Rule[] }[];
}
interface Target {
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  schemaVersion: number;
  templating: { list: { name: string; type: string; query?: string }[] };
  panels: Panel[];
}

const rulesFile = parse(read("ops/prometheus/reflector-rules.yaml")) as RulesFile;
const rules = rulesFile.groups.flatMap((group) => group.rules);
const alerts = new Map(rules.map((rule) => [rule.alert ?? "", rule]));
const dashboard = JSON.parse(read("ops/grafana/reflector-dashboard.json")) as Dashboard;
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);

/** The metrics registry as src/composition/app.ts assembles it, so names are the ones /metrics really serves. */
async function appSeriesNames(): Promise<Set<string>> {
  const metrics = createMetrics();
  createLlmMetrics(metrics.registry, { inputPerMillionUsd: 0, outputPerMillionUsd: 0 });
  createConsumerMetrics(metrics.registry);
  createQualityMetrics(metrics.registry, metrics.qualityScore);
  createLagMetrics(metrics.registry);
  createHttpMetrics(metrics.registry);
  createSpendMetrics(metrics.registry, { maxTenants: 50 }).observeSlots({ inUse: 0, waiting: 0, size: 16 });
  const none = { lessons: 0, recurrences: 0 };
  createFeedbackMetrics(metrics.registry, {
    source: {
      effectivenessSummary: () =>
        Promise.resolve({ effective: none, ineffective: none, insufficient_data: none }),
    },
    refreshMs: 60_000,
    onError: (err) => {
      throw err;
    },
  });
  return exportedSeriesNames(metrics.registry);
}

describe("PromQL metric-name extraction", () => {
  it("keeps series selectors and drops functions, keywords, matchers, durations and label lists", () => {
    const expr = `sum by (topic, partition) (rate(a_total{code!="x", job=~"y.*"}[5m] offset 1h))
      / on (topic) group_left (pod) max without (instance) (b_gauge)
      > bool 1e-3 and histogram_quantile(0.99, sum by (le) (rate(c_seconds_bucket[$__rate_interval])))
      unless changes(d_offset[15m:1m]) == 0 or {__name__="e_total"}`;
    expect(metricNamesIn(expr)).toEqual(["a_total", "b_gauge", "c_seconds_bucket", "d_offset", "e_total"]);
  });

  it("reports a name that is not exported, and only that one", () => {
    const exported = new Set(["reflector_events_total"]);
    const expr = 'sum(rate(reflector_events_total[5m])) / sum(rate(reflector_made_up_total{a="b"}[5m]))';
    expect(unknownMetrics(expr, exported)).toEqual(["reflector_made_up_total"]);
  });

  it("rejects an expression Prometheus could not parse", () => {
    expect(() => metricNamesIn("sum(rate(reflector_events_total[5m])")).toThrow(/syntax error/);
  });

  it("counts a histogram by its series, not by its base name", async () => {
    const names = await appSeriesNames();
    expect(names).toContain("reflector_stage_duration_seconds_bucket");
    expect(names).toContain("reflector_stage_duration_seconds_count");
    expect(names).not.toContain("reflector_stage_duration_seconds");
  });
});

describe("Prometheus rules (ops/prometheus/reflector-rules.yaml)", () => {
  let exported: Set<string>;
  beforeAll(async () => {
    exported = await appSeriesNames();
  });

  it("is the file the Helm chart ships as its PrometheusRule (one source of truth)", () => {
    expect(read("ops/prometheus/reflector-rules.yaml")).toBe(
      read("helm/reflector/files/reflector-rules.yaml"),
    );
  });

  it("has the lag, DLQ, LLM, readiness, HTTP and quality alerts", () => {
    expect([...alerts.keys()].sort()).toEqual(
      [
        "ReflectorConsumerLagGrowing",
        "ReflectorConsumerLagStalled",
        "ReflectorConsumerLagRefreshFailing",
        "ReflectorDeadLetterRate",
        "ReflectorNotReady",
        "ReflectorLlmErrorRate",
        "ReflectorLlmCircuitOpen",
        "ReflectorTenantOverLlmBudget",
        "ReflectorQualityScoreLow",
        "ReflectorDepthScoreLow",
        "ReflectorActionabilityScoreLow",
        "ReflectorCompletenessLow",
        "ReflectorRejectionRateHigh",
        "ReflectorPatternValidityLow",
        "ReflectorImprovementLoopSuccessLow",
        "ReflectorLessonsForTaskSlow",
        "ReflectorHttpErrorRate",
      ].sort(),
    );
  });

  it("gives every alert a severity, a summary, a description and a runbook anchor", () => {
    for (const rule of rules) {
      const name = rule.alert ?? "";
      expect(name, "only alerting rules").not.toBe("");
      expect(["warning", "critical"], name).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, name).toBeTruthy();
      expect(rule.annotations?.description, name).toBeTruthy();
      expect(rule.annotations?.runbook_url, name).toBe(`docs/operations.md#${name.toLowerCase()}`);
      expect(rule.for, name).toMatch(/^\d+[smh]$/);
    }
  });

  // The alert thresholds of docs/specification.md#quality-targets-and-alerts.
  const seedThresholds: [alert: string, comparison: string][] = [
    ["ReflectorQualityScoreLow", "< 0.6"],
    ["ReflectorDepthScoreLow", "< 0.5"],
    ["ReflectorActionabilityScoreLow", "< 0.6"],
    ["ReflectorCompletenessLow", "< 0.7"],
    ["ReflectorRejectionRateHigh", "> 0.15"],
    ["ReflectorPatternValidityLow", "< 0.5"],
    ["ReflectorImprovementLoopSuccessLow", "< 0.8"],
  ];
  it.each(seedThresholds)("%s fires at its documented threshold %s", (alert, comparison) => {
    const expr = alerts.get(alert)?.expr ?? "";
    expect(expr.replace(/\s+/g, " ")).toContain(`) ${comparison} and`);
  });

  it("uses only metrics Reflector exports, in expressions Prometheus can parse", () => {
    const missing = rules.flatMap((rule) =>
      unknownMetrics(rule.expr, exported).map((name) => `${rule.alert ?? "?"}: ${name}`),
    );
    expect(missing).toEqual([]);
  });
});

describe("Grafana dashboard (ops/grafana/reflector-dashboard.json)", () => {
  let exported: Set<string>;
  beforeAll(async () => {
    exported = await appSeriesNames();
  });

  it("is a current schema with a Prometheus datasource variable that every query uses", () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const variable = dashboard.templating.list.find((v) => v.name === "datasource");
    expect(variable).toMatchObject({ type: "datasource", query: "prometheus" });
    for (const panel of panels.filter((p) => p.type !== "row")) {
      expect(panel.datasource?.uid, panel.title).toBe("${datasource}");
      for (const target of panel.targets ?? [])
        expect(target.datasource?.uid, panel.title).toBe("${datasource}");
    }
  });

  it("has unique panel ids", () => {
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("shows lag, offsets, throughput, latency, in-flight, DLQ, LLM, circuit, quality and readiness", () => {
    const used = new Set(
      panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNamesIn(t.expr ?? ""))),
    );
    for (const name of [
      "reflector_consumer_lag_messages",
      "reflector_consumer_lag_seconds",
      "reflector_consumer_committed_offset",
      "reflector_events_total",
      "reflector_stage_duration_seconds_bucket",
      "reflector_in_flight_events",
      "reflector_dead_letters_total",
      "reflector_retries_total",
      "reflector_llm_requests_total",
      "reflector_llm_tokens_total",
      "reflector_llm_errors_total",
      "reflector_llm_cost_usd_total",
      "reflector_llm_circuit_open",
      "reflector_reflection_quality_score_bucket",
      "reflector_improvement_loop_runs_total",
      "reflector_ready",
    ]) {
      expect(used, name).toContain(name);
    }
  });

  it("uses only metrics Reflector exports, in expressions Prometheus can parse", () => {
    const missing = panels.flatMap((panel) =>
      (panel.targets ?? []).flatMap((target) =>
        unknownMetrics(target.expr ?? "", exported).map((name) => `${panel.title}: ${name}`),
      ),
    );
    expect(missing).toEqual([]);
  });
});
