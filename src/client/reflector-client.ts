/**
 * A small typed client of Reflector's HTTP API for agents: send a run (OTLP over HTTP) or have it
 * reflected on at once, wait for its loop's decision (by polling the loops API: no consumer group
 * per run), fetch the lessons that apply to a task before it starts, list and rate lessons.
 * Standard `fetch` only; nothing here reaches Kafka. The API speaks snake_case; this client's
 * TypeScript surface is camelCase, mapped at the edge (requests and answers alike).
 */
import { createTransport, type RetryOptions, type TransportOptions } from "./http.js";
import { lessonMethods } from "./lesson-methods.js";
import { runMethods } from "./run-methods.js";

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

export function createReflectorClient(options: ReflectorClientOptions) {
  const { request } = createTransport(options);
  return { ...runMethods(request), ...lessonMethods(request) };
}

export type ReflectorClient = ReturnType<typeof createReflectorClient>;
