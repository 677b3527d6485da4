import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  benchEvent,
  benchSetup,
  cleanTenant,
  deleteTopics,
  produceEvents,
  report,
  startCounter,
  type BenchResult,
} from "./support.js";

function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${String(pid)}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0");
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** Drains `backlog` events with the processor in a child process for `seconds`; peak RSS, MiB. */
async function drain(
  backlog: number,
  seconds: number,
): Promise<{ peak: number; drained: number; startRss: number }> {
  const setup = await benchSetup(`rss${String(backlog)}`, 6, { LOG_LEVEL: "warn" });
  const { kafka, config, tenantId } = setup;
  for (let i = 0; i < backlog; i += 10_000) {
    await produceEvents(
      kafka,
      config.topics.taskCompleted,
      Array.from({ length: Math.min(10_000, backlog - i) }, (_, j) =>
        benchEvent(tenantId, i + j, (i + j) % 500),
      ),
    );
  }
  const decisions = await startCounter(kafka, [config.topics.loopDecision]);
  const cli = fileURLToPath(new URL("../test/support/run-cli.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", cli, "start"], {
    env: { ...process.env, ...setup.env },
    stdio: "ignore",
  });
  const pid = child.pid ?? 0;
  let peak = 0;
  let startRss = 0;
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until && decisions.state.count < backlog) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const rss = rssMiB(pid);
    if (decisions.state.count > 0 && startRss === 0) startRss = rss;
    peak = Math.max(peak, rss);
  }
  const drained = decisions.state.count;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  await decisions.stop();
  await cleanTenant(tenantId);
  await deleteTopics(setup);
  return { peak, drained, startRss };
}

/**
 * Peak RSS of the processor while draining a large backlog vs a small one, for the same time:
 * memory should be bounded by the in-flight limit (and one fetched batch per partition), not by
 * the backlog. The machine drains a few hundred events/s (Postgres-bound), so a 1,000,000-event
 * backlog cannot be drained in a benchmark run; we measure a bounded part of the drain.
 */
export async function benchRss(
  large = Number(process.env.BENCH_RSS_BACKLOG ?? 100_000),
  small = Number(process.env.BENCH_RSS_SMALL ?? 5_000),
  seconds = Number(process.env.BENCH_RSS_SECONDS ?? 45),
): Promise<BenchResult> {
  const a = await drain(small, seconds);
  const b = await drain(large, seconds);
  const ratio = b.peak / a.peak;
  return {
    name: "peak RSS while draining a backlog (processor in its own process)",
    lines: [
      `backlog ${String(small)}: drained ${String(a.drained)} in ≤ ${String(seconds)} s, RSS at first output ${a.startRss.toFixed(0)} MiB, peak ${a.peak.toFixed(0)} MiB`,
      `backlog ${String(large)}: drained ${String(b.drained)} in ${String(seconds)} s, RSS at first output ${b.startRss.toFixed(0)} MiB, peak ${b.peak.toFixed(0)} MiB`,
    ],
    ratio,
    goal: "peak(large backlog) ÷ peak(small backlog) ≤ 1.25 (flat)",
    met: ratio <= 1.25,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchRss());
  process.exit(0);
}
