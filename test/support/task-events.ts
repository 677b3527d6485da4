import { randomUUID } from "node:crypto";
import type { TaskCompleted, TraceEvent } from "../../src/domain/contracts/index.js";

/** A realistic failing task (a postgres JOIN timing out), with overrides for each test. */
export function taskEvent(overrides: Partial<TaskCompleted> = {}): TaskCompleted {
  const id = randomUUID().slice(0, 8);
  return {
    schemaVersion: 1,
    eventId: `evt-${id}`,
    tenantId: "tenant-a",
    projectId: "orders",
    agentId: "agent-7",
    taskId: `task-${id}`,
    loopId: `loop-${id}`,
    occurredAt: "2026-11-20T10:00:03.000Z",
    task: { description: "Fetch customer order history", goal: "Retrieve all orders for customer analysis" },
    outcome: "timeout",
    error: {
      category: "timeout_error",
      type: "query_timeout",
      code: "QUERY_TIMEOUT",
      message: "Query execution exceeded 30s limit",
      context: { query: "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.id = 4411" },
    },
    events: [
      {
        eventId: "e1",
        type: "tool_call",
        timestamp: "2026-11-20T10:00:00.000Z",
        toolName: "postgres_query",
        content: "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.id = 4411",
        metadata: { timeout_ms: 30000 },
      },
      {
        eventId: "e2",
        type: "error_event",
        timestamp: "2026-11-20T10:00:30.000Z",
        toolName: "postgres_query",
        content: "Query timeout after 30 seconds",
        error: { message: "canceling statement due to statement timeout", code: "QUERY_TIMEOUT" },
      },
    ],
    ...overrides,
  };
}

/** One step of a hand-written trace: who acted, the kind of event, what it said, and its tool. */
export type Step = [actor: string, type: TraceEvent["type"], content: string, tool?: string];

/** A failed task whose trace is the steps given, one second apart, failing with `message`. */
export function failedRun(steps: Step[], message: string): TaskCompleted {
  return taskEvent({
    outcome: "failure",
    error: { category: "task_failure", message },
    events: steps.map(([actor, type, content, toolName], i) => ({
      eventId: `s${String(i)}`,
      type,
      timestamp: `2026-11-20T10:00:${String(i).padStart(2, "0")}.000Z`,
      actor,
      content,
      ...(toolName ? { toolName } : {}),
    })),
  });
}
