/**
 * `@reflector/client`: the TypeScript client of Reflector's HTTP API (clients/typescript packs
 * this folder). Standard `fetch` only, no dependencies.
 */
export {
  createReflectorClient,
  type ReflectorClient,
  type ReflectorClientOptions,
} from "./reflector-client.js";
export { ReflectorApiError, problemOf, retryAfterMs, type ProblemDetails } from "./errors.js";
export { backoffMs, retryStatuses, type CallOptions, type RetryOptions } from "./http.js";
export {
  lessonsPreamble,
  lessonsPrompt,
  type Lesson,
  type LessonsForTaskAnswer,
  type LessonsForTaskQuery,
} from "./lessons.js";
export { otlpJsonOfRun, type AgentRun, type AgentStep } from "./otlp-json.js";
export type {
  Feedback,
  FeedbackAnswer,
  LoopComplete,
  LoopCompleteAnswer,
  LoopDecision,
  ReflectAnswer,
  ReflectionsPage,
  ReflectionsQuery,
  StoredLesson,
} from "./types.js";
export { operations, type CamelCase, type Operation } from "./wire.js";
