import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import type { Harness } from "./harness.js";
import { taskEvent } from "./task-events.js";

/** An answer of the HTTP API, its body parsed as JSON (empty when it is not). */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
  text: string;
  headers: Record<string, unknown>;
}

export interface ApiOptions {
  /** The API key; null sends none; absent sends the default key. */
  key?: string | null;
  body?: unknown;
  raw?: string;
  authorization?: string;
}

/** Requests to the harness's HTTP API (in process), with `defaultKey` unless told otherwise. */
export function apiOf(h: () => Harness, defaultKey: string) {
  return async function api(method: "GET" | "POST", url: string, options: ApiOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    const key = options.key === undefined ? defaultKey : options.key;
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    else if (key !== null) headers.authorization = `Bearer ${key}`;
    if (options.raw !== undefined || options.body !== undefined) headers["content-type"] = "application/json";
    const res = await h().app.http.inject({
      method,
      url,
      headers,
      ...(options.raw !== undefined ? { payload: options.raw } : {}),
      ...(options.body !== undefined ? { payload: JSON.stringify(options.body) } : {}),
    });
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      body = {};
    }
    return { status: res.statusCode, body, text: res.body, headers: res.headers };
  };
}

export interface Stored {
  eventId: string;
  reflectionId: string;
  signature: string;
  qualityScore: number;
}

/** Publishes a task event and waits until the pipeline has stored (or counted) its reflection. */
export async function storeThrough(h: Harness, event: TaskCompleted): Promise<Stored> {
  await h.publish(event);
  const outputs = await h.waitForOutputs(event.eventId, 2);
  const outcome = outputs.find((o) => o.topic === h.config.topics.reflectionAccepted)?.value;
  if (!outcome || typeof outcome.reflectionId !== "string") {
    throw new Error(`event ${event.eventId} was not stored: ${JSON.stringify(outputs.map((o) => o.value))}`);
  }
  return {
    eventId: event.eventId,
    reflectionId: outcome.reflectionId,
    signature: String(outcome.signature),
    qualityScore: Number(outcome.qualityScore),
  };
}

/**
 * A timeout whose trace says what its message says: each lesson is about its own failure, so the
 * judge does not find one a repeat of another (unlike the default trace, the same for every event).
 */
export function failure(
  tenantId: string,
  type: string,
  message: string,
  description: string,
  { category = "timeout_error", tool = "postgres_query" } = {},
): TaskCompleted {
  return taskEvent({
    tenantId,
    task: { description, goal: description },
    error: { category, type, message },
    events: [
      {
        eventId: "e1",
        type: "tool_call",
        timestamp: "2026-11-20T10:00:00.000Z",
        toolName: tool,
        content: `${description}: one query for every row, no LIMIT`,
      },
      {
        eventId: "e2",
        type: "error_event",
        timestamp: "2026-11-20T10:00:30.000Z",
        toolName: tool,
        content: message,
        error: { message, code: type.toUpperCase() },
      },
    ],
  });
}
