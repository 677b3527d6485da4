/**
 * The client's calls about lessons: those that apply to a task, the stored ones (listed, by
 * signature, their sources), feedback on them and the tenant's insights. A server from before the
 * API's one spelling (snake_case, `limit`) is asked again in its own, and remembered.
 */
import { ReflectorApiError } from "./errors.js";
import type { CallOptions, Transport } from "./http.js";
import { lessonsForTaskAnswerOf, type LessonsForTaskAnswer, type LessonsForTaskQuery } from "./lessons.js";
import type { Feedback, FeedbackAnswer, LoopDecision, ReflectionsPage, ReflectionsQuery } from "./types.js";
import { camelKeys, operations, pathOf, snakeFields } from "./wire.js";

/** A `400` of a server that does not know these fields (an older spelling of the API). */
function refusesFields(err: unknown, fields: readonly string[]): boolean {
  if (!(err instanceof ReflectorApiError) || err.status !== 400) return false;
  const text = [err.detail ?? "", ...err.issues.map((i) => JSON.stringify(i))].join("\n");
  return /unrecognized|unknown/i.test(text) && fields.some((f) => text.includes(f));
}

/** The request fields only the snake_case spelling of lessons for a task writes with an underscore. */
const snakeOnlyForTask = ["agent_id", "project_id", "min_importance", "min_relevance", "loop_id"];

export function lessonMethods(request: Transport["request"]) {
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
