import { z } from "zod";
import { TaskCompletedV1 } from "../../domain/contracts/task-completed.js";
import { boundedName } from "../../domain/contracts/task-completed.js";
import { ReflectorError } from "../../domain/errors.js";
import type { TraceMappingOptions } from "../../domain/otlp/map-trace.js";
import { OtlpTraceRequest } from "../../domain/otlp/otlp-span.js";
import { withOccurrences } from "../../pipeline/outcome-message.js";
import type { ProcessedEvent } from "../../pipeline/ports.js";
import type { RunReflector } from "../../pipeline/reflect-run.js";
import {
  answers,
  bearer,
  notFoundForTenant,
  type ApiContext,
  type ApiScope,
  type RouteRoles,
} from "../api-context.js";
import { ReflectAnswer, ReflectPending, reflectJson } from "./reflect-answers.js";
import { runInputOf } from "./reflect-run-input.js";

export interface ReflectRouteDeps {
  /** The pipeline, as `POST /api/v1/reflect` runs it; absent: the route answers 503. */
  reflector: RunReflector | undefined;
  /** The processed-events row of an event id for the tenant (the outcome, once committed). */
  findProcessed(tenantId: string, eventId: string): Promise<ProcessedEvent | null>;
  /** How an OTLP export is read into a run (the OTLP bridge's settings). */
  mapping: TraceMappingOptions;
  /** REFLECT_HTTP_TIMEOUT_MS: past it the answer is 202 with where to fetch the outcome. */
  timeoutMs: number;
  /** REFLECT_HTTP_MAX_BODY_BYTES. */
  maxBodyBytes: number;
  /** REFLECT_HTTP_MAX_IN_FLIGHT: runs one process reflects at once; more get 503. */
  maxInFlight: number;
  /** Where a run that failed after its deadline answered is logged. */
  logger?: { warn(obj: object, msg: string): void };
}

export const reflectRouteRoles: RouteRoles = {
  // Reflecting a run decides its loop and writes lessons: the role that reports a finished loop.
  "POST /api/v1/reflect": "decide",
  "GET /api/v1/reflect/:event_id": "read",
};

const EventIdParams = z.strictObject({ event_id: boundedName(200) });

/** Documents the body; the route reads it itself (`runInputOf`), to say which of the two it took it for. */
const ReflectBody = z
  .union([TaskCompletedV1.meta({ id: "TaskCompleted" }), OtlpTraceRequest.meta({ id: "OtlpTraceExport" })])
  .describe(
    "one run: a task-completed event in the JSON shape of the agent.task.completed topic (its tenantId the API key's), or an OTLP/JSON ExportTraceServiceRequest holding one trace",
  );

const outcomeUrl = (eventId: string) => `/api/v1/reflect/${encodeURIComponent(eventId)}`;

/** Resolves with the run, or with null once `ms` passed (the run goes on). */
function within<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      resolve(null);
    }, ms);
  });
  return Promise.race([work, deadline]).finally(() => {
    clearTimeout(timer);
  });
}

/** `POST /api/v1/reflect` and `GET /api/v1/reflect/{event_id}`: one run through the pipeline over HTTP. */
export function registerReflectRoutes(
  scope: ApiScope,
  given: ReflectRouteDeps | undefined,
  ctx: ApiContext,
): void {
  // Without the pipeline (a server built for other routes) both routes answer 503.
  const deps: ReflectRouteDeps = given ?? {
    reflector: undefined,
    findProcessed: () => Promise.reject(new ReflectorError("STORE_UNAVAILABLE", "reflect is not set up")),
    mapping: { tenantAttribute: "", projectAttribute: "", defaultTenant: "", defaultProject: "" },
    timeoutMs: 1,
    maxBodyBytes: 1_048_576,
    maxInFlight: 1,
  };
  scope.post(
    "/api/v1/reflect",
    {
      bodyLimit: deps.maxBodyBytes,
      // The body is read by `runInputOf` (a task event or an OTLP export); the schema documents it.
      validatorCompiler: () => (data: unknown) => ({ value: data }),
      schema: {
        summary:
          "Reflect one run through the same pipeline as a Kafka event: its reflection, verdict and decision",
        operationId: "reflectRun",
        tags: ["reflect"],
        security: bearer,
        body: ReflectBody,
        response: answers(
          { 200: ReflectAnswer, 202: ReflectPending },
          {
            403: "the API key lacks the decide role, or the run names another tenant",
            503: "a dependency is unavailable, or this process reflects `REFLECT_HTTP_MAX_IN_FLIGHT` runs already: retry after `Retry-After` seconds",
          },
          { body: true },
        ),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const reflector = deps.reflector;
      if (!reflector)
        return reply
          .code(503)
          .header("retry-after", "5")
          .send({ error: "unavailable", message: "reflecting over HTTP is not set up on this server" });
      const input = runInputOf(tenantId, request.body, deps.mapping);
      if (!input.ok) {
        const error = input.status === 403 ? "forbidden" : "bad_request";
        return reply.code(input.status).send({ error, message: input.message, issues: input.issues });
      }
      const { event } = input;
      if (reflector.inFlight >= deps.maxInFlight)
        return reply
          .code(503)
          .header("retry-after", "1")
          .send({
            error: "unavailable",
            message: `this process reflects ${String(deps.maxInFlight)} runs already: retry later`,
          });
      const running = reflector.reflect(event);
      const run = await within(running, deps.timeoutMs);
      if (run === null) {
        running.catch((err: unknown) => {
          deps.logger?.warn(
            { err, eventId: event.eventId },
            "reflect: the run failed after its deadline answered",
          );
        });
        const retryAfter = Math.max(1, Math.ceil(deps.timeoutMs / 2_000));
        return reply
          .code(202)
          .header("retry-after", String(retryAfter))
          .header("location", outcomeUrl(event.eventId))
          .send({
            event_id: event.eventId,
            status: "pending",
            detail: `not reflected within ${String(deps.timeoutMs)} ms; the run goes on`,
            outcome_url: outcomeUrl(event.eventId),
          });
      }
      return reflectJson(event, run.status, run.outputs);
    },
  );

  scope.get(
    "/api/v1/reflect/:event_id",
    {
      schema: {
        summary: "The outcome of a run reflected before (over HTTP or from Kafka), by its event id",
        operationId: "getReflectOutcome",
        tags: ["reflect"],
        security: bearer,
        params: EventIdParams,
        response: answers(
          { 200: ReflectAnswer },
          { 404: `not reflected (yet) for this tenant; ${notFoundForTenant}` },
        ),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const eventId = request.params.event_id;
      const processed = await deps.findProcessed(tenantId, eventId);
      if (!processed)
        return reply
          .code(404)
          .send({ error: "not_found", message: `no run ${eventId} reflected for this tenant (yet)` });
      const outputs = withOccurrences(processed.outputs, processed.occurrences);
      const decision = outputs.find((o) => o.role === "loopDecision")?.value as
        { loopId?: string } | undefined;
      const outcome = outputs.find((o) => o.role !== "loopDecision")?.value as
        { loopId?: string } | undefined;
      const loopId = outcome?.loopId ?? decision?.loopId ?? "";
      return reflectJson({ eventId, loopId }, "replayed", outputs);
    },
  );
}
