import {
  answers,
  bearer,
  markDeprecated,
  type ApiContext,
  type ApiScope,
  type RouteRoles,
} from "../api-context.js";
import type { LessonsForTask } from "./lessons-for-task.js";
import {
  LessonsForTaskCamelCase,
  LessonsForTaskJson,
  LessonsForTaskRequest,
  lessonsForTaskJson,
} from "./lessons-for-task-spelling.js";

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
        operationId: "getLessonsForTask",
        tags: ["lessons"],
        security: bearer,
        body: LessonsForTaskRequest,
        response: answers(
          { 200: LessonsForTaskJson },
          {
            429: "too many unknown API keys from this address, or the API key asked more than `LESSONS_FOR_TASK_REQUESTS_PER_MINUTE` times a minute: retry after `Retry-After` seconds",
          },
          { body: true },
        ),
      },
      // A request in the deprecated camelCase is answered in camelCase (checked against this).
      config: { deprecatedAnswers: { 200: LessonsForTaskCamelCase } },
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
        const { body, camelCase } = request.body;
        const record =
          body.loopId !== undefined && ctx.hasRole(request, "vote") && retrievals.take(tenantId) === null;
        const answer = await forTask.forTask(tenantId, body, gone.signal, record);
        if (!camelCase) return lessonsForTaskJson(answer);
        markDeprecated(reply);
        return answer;
      } finally {
        request.raw.off("close", onClose);
      }
    },
  );
}
