import { parser } from "@prometheus-io/lezer-promql";
import type { Registry } from "prom-client";

/**
 * Metric names that a PromQL expression selects, found with Prometheus's own PromQL grammar
 * (the one its web UI uses) rather than a regex: function names, aggregation operators,
 * keywords, label matchers, durations, `by (...)`/`on (...)` label lists and numbers are
 * different nodes of the syntax tree, so only real series selectors are returned. A syntax
 * error throws, so a rule that Prometheus would refuse to load fails the test too.
 */
export function metricNamesIn(expr: string): string[] {
  const source = withoutGrafanaVariables(expr);
  const tree = parser.parse(source);
  const names = new Set<string>();
  const errors: number[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
      if (node.name !== "VectorSelector") return;
      const identifier = node.node.getChild("Identifier");
      if (identifier) names.add(source.slice(identifier.from, identifier.to));
      // `{__name__="x"}` selects a metric by label; count it as a use of x.
      const nameMatcher = /__name__\s*=\s*"([^"]+)"/.exec(source.slice(node.from, node.to));
      if (nameMatcher?.[1]) names.add(nameMatcher[1]);
    },
  });
  if (errors.length > 0) {
    const at = errors[0] ?? 0;
    throw new Error(
      `PromQL syntax error at ${at}: …${source.slice(Math.max(0, at - 20), at + 20)}… in ${expr}`,
    );
  }
  return [...names].sort();
}

/**
 * Grafana's interval variables are not PromQL; they stand in a range, so a duration keeps the
 * expression parseable. `$datasource`-style variables only appear inside label values (strings).
 */
function withoutGrafanaVariables(expr: string): string {
  return expr.replace(/\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}/g, "5m");
}

/**
 * Every series name a registry exposes: counters and gauges by name, histograms as their
 * `_bucket`, `_sum` and `_count` series (the base name of a classic histogram is no series),
 * summaries as the quantile series plus `_sum` and `_count`.
 */
export async function exportedSeriesNames(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  for (const metric of await registry.getMetricsAsJSON()) {
    const type = String(metric.type);
    if (type === "histogram") {
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(`${metric.name}${suffix}`);
    } else if (type === "summary") {
      for (const suffix of ["", "_sum", "_count"]) names.add(`${metric.name}${suffix}`);
    } else {
      names.add(metric.name);
    }
  }
  return names;
}

/** Names used by `expr` that `exported` does not contain. */
export function unknownMetrics(expr: string, exported: ReadonlySet<string>): string[] {
  return metricNamesIn(expr).filter((name) => !exported.has(name));
}
