import { isMainThread, parentPort, Worker } from "node:worker_threads";
import { buildLlm, defaultMaxMessageBytes } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import { TaskCompletedV1, type TaskCompleted } from "../src/domain/contracts/index.js";
import { defaultQualityConfig } from "../src/domain/quality/quality-config.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { report, type BenchResult } from "./support.js";

/**
 * No valid event may cost the processor more than a second of CPU: the largest events the
 * contract accepts (as large as the input topic's default `max.message.bytes` allows), each
 * through Reflector's own logic with the default settings and embedder and in-memory ports
 * (no Kafka, Postgres or Redis): decode and validate the value, process, encode the outputs.
 * Each is run twice: new (reflected and judged) and again under another event id (recalled).
 *
 * The events run in a worker thread, so that one that never finishes (a regular expression that
 * backtracks without end is synchronous: no timer of the same thread could fire) is stopped at
 * the deadline, and the run fails saying which event it was.
 */

const cpuBudgetMs = 1_000;
/** Wall time one event (both runs) may take before the worker is stopped. */
const eventDeadlineMs = Number(process.env.BENCH_MAX_EVENT_DEADLINE_MS ?? 20_000);
/** The whole run (building the events, the warm-up, every event). */
const runDeadlineMs = Number(process.env.BENCH_MAX_EVENTS_DEADLINE_MS ?? 300_000);
/** An event's JSON must fit the input topic with room for the record's key and headers. */
const maxEventBytes = defaultMaxMessageBytes - 4_096;

interface Measured {
  name: string;
  bytes: number;
  steps: number;
  newCpuMs: number;
  newWallMs: number;
  againCpuMs: number;
  verdict: string | null;
  outputBytes: number;
}
type FromWorker =
  | { kind: "start"; name: string }
  | { kind: "done"; measured: Measured }
  | { kind: "finished" }
  | { kind: "failed"; message: string };

// ---- the events ------------------------------------------------------------------------------

const at = (i: number) => new Date(Date.UTC(2026, 10, 20, 10, 0, 0, i)).toISOString();

/** `text` repeated to exactly `chars` characters. */
const fill = (text: string, chars: number) => text.repeat(Math.ceil(chars / text.length)).slice(0, chars);

/**
 * For each configured quality pattern, text that makes an unanchored search of it work hardest:
 * its first literal word repeated with no completion of the match (the search tries every start
 * and every split), and its literal parts repeated (a match at every position).
 */
function pathologicalTexts(): string[] {
  const { actionablePatterns, vaguePatterns } = defaultQualityConfig.actionability;
  return [...actionablePatterns, ...vaguePatterns].flatMap((pattern) => {
    const literal = pattern.replace(/\\[a-zA-Z]|[\\^$.*+?()[\]{}|]/g, "");
    const head = pattern.split(/[.\\[(]/)[0] ?? pattern;
    return [`${head || literal} `, `${literal} x `, `${head}${head}`];
  });
}

const base = (name: string, outcome: TaskCompleted["outcome"]): TaskCompleted => ({
  schemaVersion: 1,
  eventId: `max-${name}`,
  tenantId: "bench-max",
  projectId: "max-events",
  agentId: "agent-max",
  taskId: `task-${name}`,
  loopId: `loop-${name}`,
  occurredAt: at(0),
  task: {
    description: `Sync the partner catalogue (${name})`,
    goal: "Every partner item is in the catalogue",
    // Important work: a success is reflected on too (the path of the event that once took minutes).
    importance: 0.9,
  },
  outcome,
  ...(outcome === "success"
    ? {}
    : {
        error: {
          category: "tool_error",
          type: "sync_failed",
          code: "SYNC_FAILED",
          message: "The catalogue sync failed",
        },
      }),
  events: [],
});

const cjk = "同步合作伙伴目录失败因为速率限制请稍后再试数据库连接超时";

/** The event list: every shape is grown to the contract's limits or the topic's, whichever is first. */
function maximalEvents(): { name: string; event: TaskCompleted }[] {
  const bad = pathologicalTexts();
  const events: { name: string; event: TaskCompleted }[] = [];
  const steps = (n: number, step: (i: number) => TaskCompleted["events"][number]) =>
    Array.from({ length: n }, (_, i) => step(i));

  // 2,000 steps (the most), each with its own 200-character tool name made of pattern fodder.
  for (const outcome of ["success", "failure"] as const) {
    events.push({
      name: `${outcome}, 2,000 steps, 2,000 distinct 200-char tool names`,
      event: {
        ...base(`tools-${outcome}`, outcome),
        events: steps(2_000, (i) => ({
          eventId: `e${String(i)}`,
          type: outcome === "failure" && i % 10 === 9 ? "error_event" : "tool_call",
          timestamp: at(i),
          toolName: fill(`${String(i)} ${bad[i % bad.length] ?? "x"}`, 200),
          content: fill(`change ${String(i)} ${bad[(i + 1) % bad.length] ?? "y"}`, 400),
          ...(outcome === "failure" && i % 10 === 9
            ? { error: { message: fill(bad[i % bad.length] ?? "z", 60), code: "E" } }
            : {}),
        })),
      },
    });
  }
  // 2,000 steps of CJK text (three bytes a character in UTF-8, one token each by the estimate).
  events.push({
    name: "failure, 2,000 steps of CJK text and CJK tool names",
    event: {
      ...base("cjk", "failure"),
      error: { category: "tool_error", message: fill(cjk, 16_000) },
      task: { description: fill(cjk, 4_000), goal: fill(cjk, 2_000) },
      events: steps(2_000, (i) => ({
        eventId: `e${String(i)}`,
        type: i % 7 === 6 ? "error_event" : "tool_call",
        timestamp: at(i),
        toolName: `工具${String(i)}${fill(cjk, 40)}`,
        content: fill(cjk.slice(i % cjk.length) + cjk, 200),
      })),
    },
  });
  // Few steps at the per-step limit (64,000 characters), one per pathological text.
  events.push({
    name: "failure, 15 steps of 64,000 chars of pattern fodder",
    event: {
      ...base("huge-steps", "failure"),
      events: steps(15, (i) => ({
        eventId: `e${String(i)}`,
        type: i === 14 ? "error_event" : "tool_call",
        timestamp: at(i),
        toolName: fill(bad[i % bad.length] ?? "t", 200),
        content: fill(bad[i % bad.length] ?? "c", 64_000),
      })),
    },
  });
  // Every other field at its limit: task texts, error and its context, critique, tags, claims.
  const fodder = (i: number, chars: number) => fill(bad[i % bad.length] ?? "f", chars);
  events.push({
    name: "failure, every text field at its limit",
    event: {
      ...base("all-fields", "failure"),
      task: {
        description: fodder(0, 16_000),
        goal: fodder(1, 16_000),
        query: fodder(2, 64_000),
        answer: fodder(3, 64_000),
        importance: 1,
      },
      error: {
        category: fill("c", 200),
        type: fill("t", 200),
        code: fill("E", 200),
        message: fodder(4, 16_000),
        context: Object.fromEntries(
          Array.from({ length: 60 }, (_, i) => [`k${String(i)}`, fodder(i, 1_000)]),
        ),
      },
      evaluation: { critique: fodder(5, 16_000), iteration: 3, revised: true },
      biasTags: Array.from({ length: 100 }, (_, i) => ({ tag: fodder(i, 100), severity: "high" as const })),
      verificationResults: Array.from({ length: 500 }, (_, i) => ({
        status: "conflict" as const,
        claimText: fodder(i, 500),
        conflictReason: fodder(i + 1, 300),
      })),
      events: steps(400, (i) => ({
        eventId: `e${String(i)}`,
        type: i % 5 === 4 ? "error_event" : "llm_response",
        timestamp: at(i),
        toolName: fodder(i, 200),
        actor: fodder(i + 2, 200),
        content: fodder(i, 2_000),
        metadata: { note: fodder(i + 3, 100) },
        ...(i % 5 === 4 ? { error: { message: fodder(i, 300), code: "E" } } : {}),
      })),
    },
  });
  // One event per pathological text: every step, the error and the critique made of it alone.
  bad.forEach((text, p) => {
    events.push({
      name: `failure, 2,000 steps of ${JSON.stringify(text.slice(0, 24))}`,
      event: {
        ...base(`pattern-${String(p)}`, "failure"),
        error: { category: "tool_error", message: fill(text, 16_000) },
        evaluation: { critique: fill(text, 16_000) },
        events: steps(2_000, (i) => ({
          eventId: `e${String(i)}`,
          type: i % 4 === 3 ? "error_event" : "tool_call",
          timestamp: at(i),
          toolName: fill(`${text}${String(i)}`, 150),
          content: fill(text, 500),
        })),
      },
    });
  });
  return events;
}

/**
 * The event cut to the topic's limit: every step's content shortened by the same share of the
 * excess (the events are built a little larger than fits, so each ends up as large as fits).
 */
function fitToTopic(event: TaskCompleted): TaskCompleted {
  let fitted = event;
  for (let round = 0; round < 20; round += 1) {
    const excess = Buffer.byteLength(JSON.stringify(fitted)) - maxEventBytes;
    if (excess <= 0 || fitted.events.length === 0) return fitted;
    const perStep = Math.ceil(excess / fitted.events.length) + 8;
    fitted = {
      ...fitted,
      events: fitted.events.map((step) => {
        const bytesPerChar = Buffer.byteLength(step.content) / Math.max(1, step.content.length);
        return {
          ...step,
          content: step.content.slice(
            0,
            Math.max(1, step.content.length - Math.ceil(perStep / bytesPerChar)),
          ),
        };
      }),
    };
  }
  return fitted;
}

// ---- the worker: builds, checks and runs the events ---------------------------------------------

async function runInWorker(port: NonNullable<typeof parentPort>): Promise<void> {
  const config = loadConfig(
    Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("REFLECTOR_EMBEDDING"))),
  );
  const { embedder } = buildLlm(config);
  const processor = createOfflineProcessor(
    { store: createFakeStore().store, index: createFakeIndex().index },
    { embedder },
  );
  const values = maximalEvents().map(({ name, event: built }) => {
    const event = fitToTopic(built);
    const value = Buffer.from(JSON.stringify(event));
    if (value.length > maxEventBytes)
      throw new Error(`${name}: ${String(value.length)} bytes, over the input topic's limit`);
    TaskCompletedV1.parse(event); // invalid would measure nothing: the bench's events must be valid
    return { name, value, steps: event.events.length };
  });
  const run = async (value: Buffer, eventId?: string) => {
    const raw = JSON.parse(value.toString()) as TaskCompleted;
    const event = TaskCompletedV1.parse(eventId ? { ...raw, eventId } : raw);
    const result = await processor.process(event, null);
    let outputBytes = 0;
    for (const output of result.outputs) outputBytes += Buffer.byteLength(JSON.stringify(output.value));
    return { result, outputBytes };
  };
  // Warm-up (JIT, the embedder's tables) on an ordinary event, not measured.
  const first = values[0];
  if (first) await run(Buffer.from(first.value.toString().replaceAll("max-", "warm-")));
  for (const { name, value, steps } of values) {
    port.postMessage({ kind: "start", name } satisfies FromWorker);
    const cpu = process.cpuUsage();
    const wall = performance.now();
    const { result, outputBytes } = await run(value);
    const used = process.cpuUsage(cpu);
    const newWallMs = performance.now() - wall;
    const again = process.cpuUsage();
    await run(value, `again-${name}`);
    const usedAgain = process.cpuUsage(again);
    port.postMessage({
      kind: "done",
      measured: {
        name,
        bytes: value.length,
        steps,
        newCpuMs: (used.user + used.system) / 1000,
        newWallMs,
        againCpuMs: (usedAgain.user + usedAgain.system) / 1000,
        verdict: result.verdict,
        outputBytes,
      },
    } satisfies FromWorker);
  }
  port.postMessage({ kind: "finished" } satisfies FromWorker);
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  runInWorker(port).catch((err: unknown) => {
    port.postMessage({
      kind: "failed",
      message: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
  });
}

// ---- the main thread: deadlines and the report -------------------------------------------------

function measureAll(): Promise<Measured[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url));
    const measured: Measured[] = [];
    let current = "(building the events)";
    let eventTimer: NodeJS.Timeout | undefined;
    const stop = (err: Error | null) => {
      clearTimeout(eventTimer);
      clearTimeout(runTimer);
      void worker.terminate();
      if (err) reject(err);
      else resolve(measured);
    };
    const runTimer = setTimeout(() => {
      stop(
        new Error(
          `max-events: the run did not finish within ${String(runDeadlineMs / 1000)} s (at ${current})`,
        ),
      );
    }, runDeadlineMs);
    worker.on("message", (message: FromWorker) => {
      if (message.kind === "start") {
        current = message.name;
        clearTimeout(eventTimer);
        eventTimer = setTimeout(() => {
          stop(
            new Error(
              `max-events: "${current}" did not finish within ${String(eventDeadlineMs / 1000)} s: stopped`,
            ),
          );
        }, eventDeadlineMs);
      } else if (message.kind === "done") {
        clearTimeout(eventTimer);
        measured.push(message.measured);
      } else if (message.kind === "finished") stop(null);
      else stop(new Error(`max-events: the worker failed: ${message.message}`));
    });
    worker.on("error", (err: Error) => {
      stop(err);
    });
    worker.on("exit", (code) => {
      if (code !== 0)
        stop(new Error(`max-events: the worker exited with code ${String(code)} at ${current}`));
    });
  });
}

export async function benchMaxEvents(): Promise<BenchResult> {
  const measured = await measureAll();
  const unjudged = measured.filter((m) => m.verdict === null);
  if (unjudged.length > 0)
    throw new Error(
      `max-events: not reflected and judged, so not what this measures: ${unjudged.map((m) => m.name).join("; ")}`,
    );
  const worst = Math.max(...measured.map((m) => Math.max(m.newCpuMs, m.againCpuMs)));
  const lines = measured.map(
    (m) =>
      `${m.name}: ${(m.bytes / 1024).toFixed(0)} KiB, ${String(m.steps)} steps — new ${m.newCpuMs.toFixed(0)} ms CPU (${m.newWallMs.toFixed(0)} ms wall, ${m.verdict ?? "no verdict"}, outputs ${(m.outputBytes / 1024).toFixed(1)} KiB), again ${m.againCpuMs.toFixed(0)} ms CPU`,
  );
  lines.push(
    `${String(measured.length)} maximal valid events, each ≤ ${String(maxEventBytes)} bytes; worst ${worst.toFixed(0)} ms of CPU`,
    "decode + validate + process + encode outputs, default settings and embedder, in-memory ports, one worker thread",
  );
  const result: BenchResult = {
    name: "maximal valid events (CPU per event in the processor)",
    lines,
    ratio: worst / cpuBudgetMs,
    goal: "≤ 1 s of CPU for every valid event",
    met: worst <= cpuBudgetMs,
  };
  const over = measured.filter((m) => Math.max(m.newCpuMs, m.againCpuMs) > cpuBudgetMs);
  if (over.length > 0) {
    report(result);
    throw new Error(
      `max-events: over ${String(cpuBudgetMs)} ms of CPU: ${over.map((m) => m.name).join("; ")}`,
    );
  }
  return result;
}

if (isMainThread && import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchMaxEvents());
  process.exit(0);
}
