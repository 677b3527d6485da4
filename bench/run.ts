/**
 * All benchmarks, one after the other: `npm run bench`, or one of them:
 * `npm run bench -- e2e|floor|llm|calls|calls-recorded|attribution|generalisation|held-out-model|hot-path-cpu|prompt-coverage|latency|rss|embeddings|embedder-quality|cheap|memory|memory-real|memory-kafka|calibration|judge|model-bound|otlp|otlp-http|otlp-http-stall|tracing|max-events|lessons-for-task|tenant-isolation|idle-cpu|lessons-for-task-scale`. Each prints its
 * ratio measured in the same run.
 */
import { benchCalibration } from "./calibration.js";
import { benchCheapEvents } from "./cheap-events.js";
import { benchE2e } from "./e2e.js";
import { benchEmbedderQuality } from "./embedder-quality.js";
import { benchEmbeddings } from "./embeddings.js";
import { benchFloor } from "./floor.js";
import { benchGeneralisation } from "./generalisation.js";
import { benchHeldOutModel } from "./held-out-model.js";
import { benchHotPathCpu } from "./hot-path-cpu.js";
import { benchIdleCpu } from "./idle-cpu.js";
import { benchJudge } from "./judge.js";
import { benchLatency } from "./latency.js";
import { benchLessonsForTask } from "./lessons-for-task.js";
import { benchLessonsForTaskScale } from "./lessons-for-task-scale.js";
import { benchAttribution } from "./attribution.js";
import { benchLlmBound, benchLlmCalls, benchLlmCallsRecorded } from "./llm.js";
import { benchMaxEvents } from "./max-events.js";
import { benchMemory } from "./memory.js";
import { benchMemoryKafka } from "./memory-kafka.js";
import { benchMemoryReal } from "./memory-real.js";
import { benchOtlpBridge } from "./otlp-bridge.js";
import { benchOtlpHttp } from "./otlp-http.js";
import { benchOtlpHttpStall } from "./otlp-http-stall.js";
import { benchPromptCoverage } from "./prompt-coverage.js";
import { benchModelBound } from "./model-bound.js";
import { benchRss } from "./rss.js";
import { machine, report, type BenchResult } from "./support.js";
import { benchTenantIsolation } from "./tenant-isolation.js";
import { benchTracing } from "./tracing.js";

const all: Record<string, () => Promise<BenchResult>> = {
  e2e: () => benchE2e(),
  floor: () => benchFloor(),
  llm: () => benchLlmBound(),
  calls: () => benchLlmCalls(),
  "calls-recorded": () => benchLlmCallsRecorded(),
  attribution: () => benchAttribution(),
  generalisation: () => benchGeneralisation(),
  "held-out-model": () => benchHeldOutModel(),
  "hot-path-cpu": () => benchHotPathCpu(),
  "prompt-coverage": () => benchPromptCoverage(),
  latency: () => benchLatency(),
  rss: () => benchRss(),
  embeddings: () => benchEmbeddings(),
  cheap: () => benchCheapEvents(),
  "embedder-quality": () => benchEmbedderQuality(),
  memory: () => benchMemory(),
  "memory-real": () => benchMemoryReal(),
  "memory-kafka": () => benchMemoryKafka(),
  calibration: () => benchCalibration(),
  judge: () => benchJudge(),
  otlp: () => benchOtlpBridge(),
  "otlp-http": () => benchOtlpHttp(),
  "otlp-http-stall": () => benchOtlpHttpStall(),
  tracing: () => benchTracing(),
  "model-bound": () => benchModelBound(),
  "max-events": () => benchMaxEvents(),
  "lessons-for-task": () => benchLessonsForTask(),
  "lessons-for-task-scale": () => benchLessonsForTaskScale(),
  "tenant-isolation": () => benchTenantIsolation(),
  "idle-cpu": () => benchIdleCpu(),
};

const wanted = process.argv.slice(2).filter((a) => a in all);
const names = wanted.length > 0 ? wanted : Object.keys(all);
console.log(`# Reflector benchmarks — ${new Date().toISOString()}`);
console.log(`machine: ${machine()}`);
console.log(`command: npm run bench${wanted.length > 0 ? ` -- ${wanted.join(" ")}` : ""}`);
const results: BenchResult[] = [];
for (const name of names) {
  const run = all[name];
  if (!run) continue;
  const result = await run();
  report(result);
  results.push(result);
}
console.log("\n| benchmark | ratio | goal | met |\n| --- | --- | --- | --- |");
for (const r of results)
  console.log(`| ${r.name} | ${r.ratio.toFixed(3)} | ${r.goal} | ${r.met ? "yes" : "no"} |`);
process.exit(0);
