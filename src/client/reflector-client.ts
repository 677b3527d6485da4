/**
 * A small typed client of Reflector's HTTP API for agents: send a run (OTLP over HTTP) or have it
 * reflected on at once, wait for its loop's decision (by polling the loops API: no consumer group
 * per run), fetch the lessons that apply to a task before it starts, list and rate lessons.
 * Standard `fetch` only; nothing here reaches Kafka. The API speaks snake_case; this client's
 * TypeScript surface is camelCase, mapped at the edge (requests and answers alike).
 */
import { ReflectorApiError } from "./errors.js";
import { createTransport, type CallOptions, type RetryOptions, type TransportOptions } from "./http.js";
import {
  lessonsForTaskAnswerOf,
  type Lesson,
  type LessonsForTaskAnswer,
  type LessonsForTaskQuery,
} from "./lessons.js";
import { otlpJsonOfRun, type AgentRun } from "./otlp-json.js";
import type {
  Feedback,
  FeedbackAnswer,
  LoopComplete,
  LoopCompleteAnswer,
  LoopDecision,
  ReflectAnswer,
  ReflectionsPage,
  ReflectionsQuery,
} from "./types.js";
import { camelKeys, operations, pathOf, snakeFields } from "./wire.js";

export interface ReflectorClientOptions extends Pick<TransportOptions, "sleep" | "random"> {
  /** Where Reflector's HTTP API listens, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** A bearer API key: `decide` to send runs, `read` to read decisions and lessons, `vote` for feedback. */
  apiKey: string;
  /** Each attempt's own time limit (default 10 s); a call may set its own. */
  requestTimeoutMs?: number;
  /** Retries on `429`/`503` (and on network errors for idempotent calls); `{ retries: 0 }` turns them off. */
  retry?: RetryOptions;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A `400` of a server that does not know these fields (an older spelling of the API). */
function refusesFields(err: unknown, fields: readonly string[]): boolean {
  if (!(err instanceof ReflectorApiError) || err.status !== 400) return false;
  const text = [err.detail ?? "", ...err.issues.map((i) => JSON.stringify(i))].join("\n");
  return /unrecognized|unknown/i.test(text) && fields.some((f) => text.includes(f));
}

/** The request fields only the snake_case spelling of lessons for a task writes with an underscore. */
const snakeOnlyForTask = ["agent_id", "project_id", "min_importance", "min_relevance", "loop_id"];

export function createReflectorClient(options: ReflectorClientOptions) {
  const { request } = createTransport(options);
  // What an older server taught this client: camelCase lessons for a task, `k` for page sizes.
  let forTaskInCamelCase = false;
  let pagesWithK = false;

  /** A GET whose page size is `limit`, or `k` on a server from before `limit`. */
  async function getPaged(
    path: string,
    query: Record<string, string | number | undefined>,
    call?: CallOptions,
  ) {
    const { limit, ...rest } = query;
    const send = (useK: boolean) =>
      request({ method: "GET", path, query: useK ? { ...rest, k: limit } : query, idempotent: true }, call);
    if (pagesWithK || limit === undefined) return send(pagesWithK);
    try {
      return await send(false);
    } catch (err) {
      if (!refusesFields(err, ["limit"])) throw err;
      pagesWithK = true;
      return send(true);
    }
  }

  const client = {
    /**
     * Sends one OTLP trace export over HTTP (`POST /v1/traces`): OTLP/JSON as an object or a
     * string, or protobuf bytes. The trace's tenant is the API key's. Spans are stored by their
     * ids, so a retry after a network error sends nothing twice.
     */
    async sendOtlp(exportRequest: object | string | Uint8Array, call?: CallOptions): Promise<void> {
      const { method, path } = operations.sendOtlp;
      const body =
        exportRequest instanceof Uint8Array
          ? { bytes: exportRequest, type: "application/x-protobuf" }
          : {
              json:
                typeof exportRequest === "string" ? (JSON.parse(exportRequest) as unknown) : exportRequest,
            };
      await request({ method, path, body, idempotent: true }, call);
    },

    /**
     * Sends an agent's run (its task, steps and outcome) as an OTLP trace under the GenAI
     * conventions; returns the trace id. The loop id is the run's `loopId` (its conversation).
     */
    async sendRun(run: AgentRun, call?: CallOptions): Promise<{ traceId: string; loopId: string }> {
      const { request: exportRequest, traceId } = otlpJsonOfRun(run);
      await client.sendOtlp(exportRequest, call);
      return { traceId, loopId: run.loopId };
    },

    /**
     * Reflects on one run at once (`POST /api/v1/reflect`, a key with `decide`): an agent run, a
     * `task-completed` event or an OTLP/JSON export goes through the same pipeline as a Kafka
     * event; the answer holds the reflection, its verdict and the loop's decision. Idempotent by
     * event id, so it is retried like a read. When the server's deadline passes first (`202`,
     * `status: "pending"`), the outcome is fetched until it is there or `wait.timeoutMs` (default
     * 120 s) passed; the pending answer is returned then.
     */
    async reflect(
      run: AgentRun | object,
      call: CallOptions & { wait?: { timeoutMs?: number; intervalMs?: number } } = {},
    ): Promise<ReflectAnswer> {
      const json = "steps" in run && "agent" in run ? otlpJsonOfRun(run as AgentRun).request : run;
      const { method, path } = operations.reflect;
      const answer = await request({ method, path, body: { json }, idempotent: true }, call);
      const first = camelKeys(answer.json) as ReflectAnswer;
      if (answer.status !== 202 || typeof first.eventId !== "string") return first;
      const deadline = Date.now() + (call.wait?.timeoutMs ?? 120_000);
      while (Date.now() < deadline) {
        await sleep(call.wait?.intervalMs ?? 1_000);
        const outcome = await client.reflectOutcome(first.eventId, call);
        if (outcome) return outcome;
      }
      return first;
    },

    /** The outcome of a run reflected before (over HTTP or from Kafka) by its event id; null while there is none. */
    async reflectOutcome(eventId: string, call?: CallOptions): Promise<ReflectAnswer | null> {
      const op = operations.reflectOutcome;
      try {
        const answer = await request(
          { method: op.method, path: pathOf(op, { event_id: eventId }), idempotent: true },
          call,
        );
        return camelKeys(answer.json) as ReflectAnswer;
      } catch (err) {
        if (err instanceof ReflectorApiError && err.status === 404) return null;
        throw err;
      }
    },

    /** The loop's last decision, or null while it has none. */
    async decisionOf(loopId: string, call?: CallOptions): Promise<LoopDecision | null> {
      const op = operations.decisionOf;
      let json: unknown;
      try {
        ({ json } = await request(
          { method: op.method, path: pathOf(op, { loopId }), idempotent: true },
          call,
        ));
      } catch (err) {
        if (err instanceof ReflectorApiError && err.status === 404) return null;
        throw err;
      }
      const s = (camelKeys(json) as { guardrailsStatus: Record<string, unknown> }).guardrailsStatus;
      if (s.decision === null || s.decision === undefined) return null;
      return {
        loopId: s.loopId as string,
        rootLoopId: (s.rootLoopId ?? null) as string | null,
        decision: s.decision as LoopDecision["decision"],
        newLoopId: (s.newLoopId ?? null) as string | null,
        rerunCount: (s.rerunCount ?? 0) as number,
        maxReruns: (s.maxReruns ?? null) as number | null,
        reason: (s.rerunReason ?? null) as string | null,
        reasonDetail: (s.rerunReasonDetail ?? null) as string | null,
        decidedAt: (s.decidedAt ?? null) as string | null,
        lessons: (s.lessons ?? []) as Lesson[],
      };
    },

    /**
     * Waits for the loop's decision by polling the loops API every `intervalMs` (default 500 ms)
     * until `timeoutMs` (default 120 s). A trace is decided once the bridge closed it (its grace
     * period) and the processor judged it. Throws when none came in time.
     */
    async waitForDecision(
      loopId: string,
      wait: { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal } = {},
    ): Promise<LoopDecision> {
      const limit = wait.timeoutMs ?? 120_000;
      const deadline = Date.now() + limit;
      for (;;) {
        const decision = await client.decisionOf(loopId, wait.signal ? { signal: wait.signal } : {});
        if (decision) return decision;
        if (Date.now() >= deadline)
          throw new Error(`no decision for loop ${loopId} within ${String(limit)} ms`);
        wait.signal?.throwIfAborted();
        await sleep(wait.intervalMs ?? 500);
      }
    },

    /**
     * An orchestrator's end-of-loop report (`POST /orchestrator/loop-complete`, `decide`): the
     * guardrails decide, as for a task event. A repeated report answers the stored decision, so it
     * is retried like a read.
     */
    async loopComplete(report: LoopComplete, call?: CallOptions): Promise<LoopCompleteAnswer> {
      const { method, path } = operations.loopComplete;
      const answer = await request(
        { method, path, body: { json: snakeFields(report) }, idempotent: true },
        call,
      );
      return camelKeys(answer.json) as LoopCompleteAnswer;
    },

    /**
     * The tenant's lessons that apply to a task, best first (`POST /api/v1/lessons/for-task`);
     * `checkedBy` says whether a model chose them among the nearest in meaning, or meaning alone.
     * Sent in snake_case; a server from before that spelling is asked again in camelCase.
     */
    async lessonsForTask(query: LessonsForTaskQuery, call?: CallOptions): Promise<LessonsForTaskAnswer> {
      const { method, path } = operations.lessonsForTask;
      const snake = snakeFields(query);
      const send = (json: unknown) => request({ method, path, body: { json }, idempotent: true }, call);
      const camel = () => Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
      if (forTaskInCamelCase) return lessonsForTaskAnswerOf((await send(camel())).json);
      try {
        return lessonsForTaskAnswerOf((await send(snake)).json);
      } catch (err) {
        if (!refusesFields(err, snakeOnlyForTask)) throw err;
        forTaskInCamelCase = true;
        return lessonsForTaskAnswerOf((await send(camel())).json);
      }
    },

    /**
     * The lessons to apply on a rerun: those the decision carries, else the lessons for the task
     * (a server whose decisions carry none yet).
     */
    async lessonsForRerun(decision: LoopDecision, task: LessonsForTaskQuery, call?: CallOptions) {
      if (decision.lessons.length > 0) return decision.lessons;
      return (await client.lessonsForTask(task, call)).lessons;
    },

    /** The tenant's stored lessons, searched by words and tags and paged (`GET /api/v1/reflections`). */
    async listReflections(search: ReflectionsQuery = {}, call?: CallOptions): Promise<ReflectionsPage> {
      const answer = await getPaged(
        operations.listReflections.path,
        {
          q: search.q,
          project: search.project,
          tags: search.tags?.length ? search.tags.join(",") : undefined,
          min_importance: search.minImportance,
          limit: search.limit,
          offset: search.offset,
          include_withheld: search.includeWithheld === undefined ? undefined : String(search.includeWithheld),
        },
        call,
      );
      return camelKeys(answer.json) as ReflectionsPage;
    },

    /** "Have I seen this error before?": the lesson stored under a signature, or null when unknown. */
    async reflectionBySignature(
      signature: string,
      call?: CallOptions,
    ): Promise<Record<string, unknown> | null> {
      const op = operations.reflectionBySignature;
      try {
        const answer = await request(
          { method: op.method, path: pathOf(op, { signature }), idempotent: true },
          call,
        );
        return camelKeys(answer.json) as Record<string, unknown>;
      } catch (err) {
        if (err instanceof ReflectorApiError && err.status === 404) return null;
        throw err;
      }
    },

    /** The failures a stored lesson stands for, oldest first. */
    async reflectionSources(id: string, page: { limit?: number } = {}, call?: CallOptions) {
      const answer = await getPaged(
        pathOf(operations.reflectionSources, { id }),
        { limit: page.limit },
        call,
      );
      return camelKeys(answer.json) as { sources: Record<string, unknown>[] } & Record<string, unknown>;
    },

    /**
     * A 👍 or 👎 on a lesson (`POST /api/v1/feedback`, `vote`). Without a `feedbackId` the client
     * makes one, so a retry after a network error is counted once.
     */
    async feedback(vote: Feedback, call?: CallOptions): Promise<FeedbackAnswer> {
      const { method, path } = operations.feedback;
      const json = snakeFields({ ...vote, feedbackId: vote.feedbackId ?? globalThis.crypto.randomUUID() });
      const answer = await request({ method, path, body: { json }, idempotent: true }, call);
      return camelKeys(answer.json) as FeedbackAnswer;
    },

    /** Issues common to the tenant's recent low-quality reflections (`GET /api/v1/insights`). */
    async insights(call?: CallOptions): Promise<{ commonIssues: { issue: string; count: number }[] }> {
      const { method, path } = operations.insights;
      const answer = await request({ method, path, idempotent: true }, call);
      return camelKeys(answer.json) as { commonIssues: { issue: string; count: number }[] };
    },
  };
  return client;
}

export type ReflectorClient = ReturnType<typeof createReflectorClient>;
