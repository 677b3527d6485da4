/**
 * CPU of the offline generator and the judge per failure, on the public real logs (every source,
 * tuned and held out): what the hot path spends on one new failure without a model. Measured with
 * `process.cpuUsage()` around the two calls, one failure at a time, after one warm-up pass; the
 * default embedder (static) for the judge's relevance and novelty.
 *
 *   REFLECTOR_REAL_LOGS_DIR=<dir> npm run bench -- hot-path-cpu
 */
import { buildLlm } from "../src/composition/builders.js";
import { reflectAndJudge } from "../src/composition/warm-up.js";
import { loadConfig } from "../src/config/config.js";
import { defaultQualityConfig } from "../src/domain/quality/quality-config.js";
import { loadRealFailures, realLogsDir } from "./real-logs/real-logs.js";
import { report, withDeadline, type BenchResult } from "./support.js";

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

export async function benchHotPathCpu(): Promise<BenchResult> {
  const lines: string[] = [];
  const logs = realLogsDir();
  if ("absent" in logs) {
    lines.push(`SKIPPED — ${logs.absent}`);
    return { name: "hot path CPU", lines, ratio: Number.NaN, goal: "mean ≤ 10 ms, p99 ≤ 50 ms", met: false };
  }
  const { embedder } = buildLlm(loadConfig({}));
  const failures = loadRealFailures(logs.dir);
  const quality = defaultQualityConfig;
  const once = (event: (typeof failures)[number]["event"]) => reflectAndJudge(event, embedder, quality);
  const run = async () => {
    for (const f of failures) await once(f.event); // warm-up: JIT, embedder cache of the vocabulary
    const bySource = new Map<string, number[]>();
    for (const f of failures) {
      const start = process.cpuUsage();
      await once(f.event);
      bySource.set(f.source, [...(bySource.get(f.source) ?? []), cpuMs(start)]);
    }
    return bySource;
  };
  const bySource = await withDeadline("hot-path-cpu", 300_000, run);
  const all: number[] = [];
  const p = (xs: number[], q: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
  for (const [source, ms] of bySource) {
    all.push(...ms);
    const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
    lines.push(
      `${source.padEnd(34)} n ${String(ms.length).padStart(3)}  CPU per failure: mean ${mean.toFixed(2)} ms  p99 ${p(ms, 0.99).toFixed(2)} ms  max ${Math.max(...ms).toFixed(2)} ms`,
    );
  }
  const mean = all.reduce((a, b) => a + b, 0) / all.length;
  const p99 = p(all, 0.99);
  lines.push(
    `all ${String(all.length)} failures: mean ${mean.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (generator + judge, CPU)`,
  );
  return {
    name: "hot path CPU (offline generator + judge)",
    lines,
    ratio: mean,
    goal: "mean ≤ 10 ms and p99 ≤ 50 ms",
    met: mean <= 10 && p99 <= 50,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchHotPathCpu());
}
