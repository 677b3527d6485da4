/**
 * The HTTP API's side of the client: the operations it calls, the snake_case fields it sends and
 * reads (the API's spelling), and the mapping to the camelCase the TypeScript API exposes.
 * test/unit/client/openapi-coverage.test.ts checks these lists against the OpenAPI document.
 */

/** `user_id` → `userId`, as a type. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

export const camelCase = (key: string): string =>
  key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const snakeCase = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every key of an answer, at every depth, in camelCase (keys already in camelCase stay as they are). */
export function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camelCase(k), camelKeys(v)]));
}

/** A request's fields in snake_case, leaving out those that are undefined (one level deep only). */
export function snakeFields(fields: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [snakeCase(k), v]),
  );
}

/** The wire fields of `POST /api/v1/lessons/for-task`. */
export const lessonsForTaskRequestFields = [
  "task",
  "goal",
  "agent_id",
  "tools",
  "project_id",
  "tags",
  "limit",
  "min_importance",
  "min_relevance",
  "loop_id",
] as const;
export const lessonsForTaskAnswerFields = ["lessons", "floor", "recorded_for", "checked_by"] as const;
export const lessonFields = [
  "reflection_id",
  "relevance",
  "effective_quality",
  "importance",
  "strategy_text",
  "adjustments",
  "tags",
  "project_id",
  "created_at",
  "prompt",
  "applied",
] as const;

export const reflectionsQueryFields = [
  "q",
  "tags",
  "project",
  "min_importance",
  "limit",
  "offset",
  "include_withheld",
] as const;
export const feedbackRequestFields = [
  "reflection_id",
  "rating",
  "comment",
  "feedback_id",
  "user_id",
] as const;
export const loopCompleteRequestFields = [
  "loop_id",
  "project_id",
  "rerun_of",
  "reflection_status",
  "outcome",
  "alignment_score",
  "drift_score",
  "bias_tags",
  "orchestrator_persona",
  "reflection_persona",
  "task",
  "override_fatigue",
  "override_max_reruns",
  "override_by",
] as const;

export interface Operation {
  method: "GET" | "POST";
  /** The path as the OpenAPI document writes it. */
  path: string;
  /** The body's fields the client may send (snake_case); absent: no JSON body of the client's making. */
  body?: readonly string[];
  /** The query parameters the client may send. */
  query?: readonly string[];
  /** The answer's top-level fields the client reads. */
  answer?: readonly string[];
}

/** Every operation the client calls, by the method that calls it. */
export const operations = {
  sendOtlp: { method: "POST", path: "/v1/traces" },
  decisionOf: {
    method: "GET",
    path: "/orchestrator/guardrails-status/{loopId}",
    answer: ["guardrails_status"],
  },
  loopComplete: {
    method: "POST",
    path: "/orchestrator/loop-complete",
    body: loopCompleteRequestFields,
    answer: ["status", "loop_id", "reflection_result", "decision_result"],
  },
  lessonsForTask: {
    method: "POST",
    path: "/api/v1/lessons/for-task",
    body: lessonsForTaskRequestFields,
    answer: lessonsForTaskAnswerFields,
  },
  listReflections: {
    method: "GET",
    path: "/api/v1/reflections",
    query: reflectionsQueryFields,
    answer: ["items", "next_offset"],
  },
  reflectionBySignature: { method: "GET", path: "/api/v1/reflections/signatures/{signature}" },
  reflectionSources: { method: "GET", path: "/api/v1/reflections/{id}/sources", query: ["limit"] },
  feedback: { method: "POST", path: "/api/v1/feedback", body: feedbackRequestFields, answer: ["status"] },
  insights: { method: "GET", path: "/api/v1/insights", answer: ["common_issues"] },
  reflect: { method: "POST", path: "/api/v1/reflect" },
  reflectOutcome: { method: "GET", path: "/api/v1/reflect/{event_id}" },
} as const satisfies Record<string, Operation>;

/** The path of an operation with its parameters filled in (each encoded). */
export function pathOf(op: Operation, params: Record<string, string> = {}): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
}
