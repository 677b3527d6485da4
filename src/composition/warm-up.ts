import type { Config } from "../config/config.js";
import { locateFailure } from "../domain/attribution/attribute-failure.js";
import type { TaskCompleted, TraceEvent } from "../domain/contracts/index.js";
import { generateHeuristicReflection } from "../domain/heuristic/generate-heuristic-reflection.js";
import { episodeText, taskText } from "../domain/memory/trace-text.js";
import { withEpisode } from "../domain/quality/pattern-validity.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import { traceFacts } from "../domain/quality/trace-facts.js";
import { judgeReflection } from "../pipeline/judge-reflection.js";
import type { Logger } from "../observability/logger.js";
import type { Embedder } from "../pipeline/ports.js";
import type { buildPostgresPool } from "./builders.js";
import { buildQualityConfig } from "./quality-config.js";

type Pool = ReturnType<typeof buildPostgresPool>;

/** The warm-up of a start (`START_WARM_UP_MS`; 0: none), with one log line of what it did. */
export async function warmUpLogged(
  config: Config,
  parts: { pool: Pool; embedder: Embedder; logger: Logger },
): Promise<void> {
  if (config.startWarmUpMs <= 0) return;
  try {
    const warmed = await warmUp({
      pool: parts.pool,
      connections: Math.min(config.databasePoolMax, 16),
      embedder: parts.embedder,
      quality: buildQualityConfig(config),
      budgetMs: config.startWarmUpMs,
    });
    parts.logger.info({ ...warmed, ms: Math.round(warmed.ms) }, "warmed up before joining the group");
  } catch (err) {
    parts.logger.warn({ err }, "warm-up failed; the pipeline warms up as it goes");
  }
}

/**
 * What a start does before the consumer joins its group, so that the first burst of new failures
 * (a restart with a backlog, a deploy that breaks many agents at once) does not pay for it:
 *
 * - **The offline generator and the judge, compiled.** Their first runs are interpreted: the first
 *   50 new failures after a start cost about 400 ms of CPU where warm code spends about 110 ms
 *   (`npm run bench -- latency` measures the burst). A few dozen synthetic failures of varied
 *   shapes run through both, in memory only: nothing is written or published, no model is asked.
 * - **Postgres connections, open.** Each is a new server process; a burst opened them one event at
 *   a time. Up to `connections` are opened at once and returned to the pool.
 *
 * Bounded by `budgetMs` of wall time, whatever the machine; a failure here is not fatal (the
 * pipeline opens connections and compiles code as it goes, as without it).
 */
export async function warmUp(options: {
  pool: Pool;
  connections: number;
  embedder: Embedder;
  quality: QualityConfig;
  budgetMs: number;
}): Promise<{ failures: number; connections: number; ms: number }> {
  const started = performance.now();
  const opening = openConnections(options.pool, options.connections);
  let failures = 0;
  let connections = 0;
  const shapes = warmUpEvents();
  try {
    while (failures < 60 && performance.now() - started < options.budgetMs) {
      const event = shapes[failures % shapes.length];
      if (!event) break;
      await reflectAndJudge(event, options.embedder, options.quality);
      failures += 1;
    }
  } finally {
    // Every connection opened goes back to the pool, whatever happened to the rest.
    connections = await opening;
  }
  return { failures, connections, ms: performance.now() - started };
}

async function openConnections(pool: Pool, n: number): Promise<number> {
  const clients = await Promise.allSettled(Array.from({ length: n }, () => pool.connect()));
  let opened = 0;
  for (const c of clients) {
    if (c.status !== "fulfilled") continue;
    c.value.release();
    opened += 1;
  }
  return opened;
}

/**
 * The offline generator and the judge on one failure, in memory (no stored neighbours or pattern
 * evidence, no model): what a new failure costs the hot path in CPU (`npm run bench -- hot-path-cpu`).
 */
export async function reflectAndJudge(
  event: TaskCompleted,
  embedder: Embedder,
  quality: QualityConfig,
): Promise<void> {
  const located = locateFailure(event);
  const reflection = generateHeuristicReflection(event, {
    attempt: 1,
    violations: [],
    missingFields: [],
    located,
  });
  const failingStep = located.stepIndex === undefined ? undefined : event.events[located.stepIndex];
  const [taskVector] = await embedder.embed([taskText(event, failingStep)]);
  await judgeReflection(
    {
      reflection,
      trace: traceFacts(event),
      taskVector: taskVector ?? null,
      neighbours: [],
      patternEvidence: withEpisode(
        new Map(),
        reflection.patterns,
        episodeText(event, failingStep),
        quality.patternValidity.keywordMatchShare,
      ),
      sameLessonSimilarity: 0.9,
    },
    embedder,
    quality,
  );
}

const step = (
  i: number,
  type: TraceEvent["type"],
  content: string,
  extra: Partial<TraceEvent> = {},
): TraceEvent => ({
  eventId: `warm-${String(i)}`,
  type,
  timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  content,
  ...extra,
});

/** Failures of the shapes the pipeline meets: a tool error, a timeout, a team's wrong answer. */
function warmUpEvents(): TaskCompleted[] {
  const base = (
    n: number,
    shape: Pick<TaskCompleted, "outcome" | "error" | "events" | "task">,
  ): TaskCompleted => ({
    schemaVersion: 1,
    eventId: `warm-up-${String(n)}`,
    tenantId: "warm-up",
    projectId: "warm-up",
    agentId: "warm-up",
    taskId: `warm-up-${String(n)}`,
    loopId: `warm-up-${String(n)}`,
    occurredAt: "2026-01-01T00:01:00.000Z",
    ...shape,
  });
  const shapes: TaskCompleted[] = [];
  for (let n = 0; n < 6; n += 1) {
    const table = ["orders", "customers", "invoices"][n % 3] ?? "orders";
    shapes.push(
      base(3 * n, {
        task: { description: `Summarise the ${table} of last week`, goal: `A weekly ${table} report` },
        outcome: "timeout",
        error: {
          category: "timeout_error",
          type: "query_timeout",
          code: "QUERY_TIMEOUT",
          message: `Query on ${table} exceeded its ${String(10 + n)}s limit`,
          context: { table },
        },
        events: [
          step(0, "tool_call", `SELECT * FROM ${table} WHERE created_at > now() - interval '7 days'`, {
            toolName: "sql",
          }),
          step(1, "error_event", `canceling statement due to statement timeout (${String(10 + n)}s)`, {
            toolName: "sql",
            error: { message: "statement timeout", code: "QUERY_TIMEOUT" },
          }),
        ],
      }),
      base(3 * n + 1, {
        task: { description: `Book the cheapest flight to city ${String(n)}`, goal: "A confirmed booking" },
        outcome: "failure",
        error: { category: "tool_error", message: `booking API answered 422: fare ${String(n)} expired` },
        events: [
          step(0, "llm_response", `I will search fares to city ${String(n)}.`, { actor: "planner" }),
          step(1, "tool_call", `search_fares(destination=city-${String(n)})`, {
            actor: "booker",
            toolName: "fares",
          }),
          step(2, "tool_response", `fare ${String(n)}: 120 USD, valid 30 s`, {
            actor: "booker",
            toolName: "fares",
          }),
          step(3, "tool_call", `book(fare=${String(n)})`, { actor: "booker", toolName: "booking" }),
          step(4, "error_event", `422 Unprocessable Entity: fare ${String(n)} expired`, {
            actor: "booker",
            toolName: "booking",
            error: { message: "fare expired", code: "422" },
          }),
        ],
      }),
      base(3 * n + 2, {
        task: { description: `Answer question ${String(n)} from the web`, goal: "The correct figure" },
        outcome: "failure",
        error: { category: "task_failure", message: "The team's answer was judged wrong." },
        events: [
          step(0, "llm_response", "Search for the 2019 report and read its table.", {
            actor: "Orchestrator",
          }),
          step(1, "tool_response", `Search results: a 2021 summary quotes ${String(40 + n)} %.`, {
            actor: "WebSurfer",
            toolName: "web_search",
          }),
          step(2, "llm_response", `The figure is ${String(40 + n)} %; final answer.`, { actor: "Assistant" }),
        ],
      }),
    );
  }
  return shapes;
}
