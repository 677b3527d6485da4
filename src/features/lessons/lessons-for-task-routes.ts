import { answers, bearer, type ApiContext, type ApiScope, type RouteRoles } from "../api-context.js";
import { LessonsForTaskBody, type LessonsForTask } from "./lessons-for-task.js";

/**
 * Loops whose served lessons one tenant may have remembered a minute, per process: each is a row
 * of `lesson_retrievals` and, once the loop completes, an outcome counted for or against lessons.
 */
export const retrievalsPerMinute = 600;

export const lessonsForTaskRouteRoles: RouteRoles = {
  "POST /api/v1/lessons/for-task": "read",
};

/** `POST /api/v1/lessons/for-task`: the tenant's lessons that apply to a task, ready for a prompt. */
export function registerLessonsForTaskRoute(
  scope: ApiScope,
  forTask: LessonsForTask | undefined,
  ctx: ApiContext,
  perKeyPerMinute: number,
): void {
  const retrievals = ctx.rateLimit(retrievalsPerMinute);
  // Each request embeds the task and may ask the model: one key's requests are bounded a minute.
  const requests = ctx.rateLimit(perKeyPerMinute);
  scope.post(
    "/api/v1/lessons/for-task",
    {
      schema: {
        summary: "Lessons that apply to a task an agent is about to do, by meaning or by a model's check",
        security: bearer,
        body: LessonsForTaskBody,
        response: answers(
          "`lessons`: at most `limit`, best first, each with `relevance` (0–1; at or above `floor`, whatever chose them) and a `prompt` to put into the agent's prompt; withheld lessons are never served. `checkedBy`: `model` when a model chose them among the nearest in meaning (`LESSONS_FOR_TASK_CHECK=model`), `meaning` otherwise",
          {
            429: "the API key asked more than `LESSONS_FOR_TASK_REQUESTS_PER_MINUTE` times a minute: retry after `Retry-After` seconds",
          },
        ),
      },
    },
    async (request, reply) => {
      const tenantId = ctx.tenantOf(request);
      const wait = requests.take(ctx.keyOf(request));
      if (wait !== null) {
        return reply
          .code(429)
          .header("retry-after", String(wait))
          .send({
            error: "too_many_requests",
            message: `this API key asked for lessons for a task more than ${String(perKeyPerMinute)} times a minute: retry in ${String(wait)} s`,
          });
      }
      if (!forTask)
        return reply
          .code(503)
          .send({ error: "unavailable", message: "lessons for a task are not set up on this server" });
      // An agent that hangs up is not waited for: its model check, queued or in flight, is aborted.
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.sent) gone.abort();
      };
      request.raw.once("close", onClose);
      try {
        // A remembered retrieval makes the loop's outcome move the lessons' helped / failed-again
        // counts, which is a vote: only a key with the vote role has it remembered, and a tenant
        // only so many a minute (a bound on the rows a caller can write).
        const record =
          request.body.loopId !== undefined &&
          ctx.hasRole(request, "vote") &&
          retrievals.take(tenantId) === null;
        return await forTask.forTask(tenantId, request.body, gone.signal, record);
      } finally {
        request.raw.off("close", onClose);
      }
    },
  );
}
