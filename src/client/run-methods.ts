/**
 * The client's calls about runs and loops: send a run (OTLP over HTTP), reflect on one at once,
 * read and wait for a loop's decision, report a finished loop.
 */
import { ReflectorApiError } from "./errors.js";
import type { CallOptions, Transport } from "./http.js";
import type { Lesson } from "./lessons.js";
import { otlpJsonOfRun, type AgentRun } from "./otlp-json.js";
import type { LoopComplete, LoopCompleteAnswer, LoopDecision, ReflectAnswer } from "./types.js";
import { camelKeys, operations, pathOf, snakeFields } from "./wire.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function runMethods(request: Transport["request"]) {
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
      const json = "steps" in run && "agent" in run ? otlpJsonOfRun(run).request : run;
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
  };
  return client;
}
