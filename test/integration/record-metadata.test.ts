import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiOf, failure, storeThrough } from "../support/api-requests.js";
import { startHarness, type Harness } from "../support/harness.js";

/**
 * The record's metadata: what a stored lesson keeps of the event it was written for (task
 * description, event count, session; the reflection's context, query and iteration; its
 * relationships), stored with it and returned by the lessons API.
 */

const run = randomUUID().slice(0, 8);
const tenant = `metadata-${run}`;
const key = `key-metadata-${run}-0123456789`;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ env: { API_KEYS: `${key}:${tenant}:read` } });
});

afterAll(async () => {
  await h.close();
});

const api = apiOf(() => h, key);

describe("the record's metadata", () => {
  it("keeps the event's task, session, context and relationships with the lesson and returns them", async () => {
    const base = failure(
      tenant,
      "query_timeout",
      "Query on orders exceeded the 30s statement timeout",
      "Fetch order history for customer cus_48213",
    );
    const event = {
      ...base,
      sessionId: `session-${run}`,
      relatedMemoryIds: ["mem-orders-schema", "mem-pagination-note"],
      task: { ...base.task, query: "Which orders did customer cus_48213 place in 2025?" },
      scores: { qualityBefore: 0.4, qualityAfter: 0.65 },
      evaluation: { iteration: 2, critique: "The first draft listed no orders." },
    };
    const stored = await storeThrough(h, event);

    const expected = {
      outcome: "timeout",
      task_description: "Fetch order history for customer cus_48213",
      event_count: 2,
      session_id: `session-${run}`,
      agent_id: event.agentId,
      task_id: event.taskId,
      context: {
        error_signature: stored.signature,
        original_query: "Which orders did customer cus_48213 place in 2025?",
        iteration_count: 2,
        quality_improvement: 0.25,
        reflection_context: "Fetch order history for customer cus_48213",
      },
      relationships: {
        source_event_id: event.eventId,
        source_step_ids: ["e1", "e2"],
        related_memory_ids: ["mem-orders-schema", "mem-pagination-note"],
      },
    };
    const row = await h.pool.query<{ metadata: Record<string, unknown> }>(
      "SELECT metadata FROM reflections WHERE tenant_id = $1 AND id = $2",
      [tenant, stored.reflectionId],
    );
    expect(row.rows[0]?.metadata).toMatchObject(expected);
    expect(Date.parse(String(row.rows[0]?.metadata.generated_at))).not.toBeNaN();

    const listed = await api("GET", "/api/v1/reflections");
    const lesson = (listed.body.items as { id: string; metadata: unknown }[]).find(
      (r) => r.id === stored.reflectionId,
    );
    expect(lesson?.metadata).toMatchObject(expected);

    const seen = await api("GET", `/api/v1/reflections/signatures/${stored.signature}`);
    expect(seen.status).toBe(200);
    expect((seen.body.lesson as { metadata: unknown }).metadata).toMatchObject(expected);
  });

  it("answers null for a lesson stored before the metadata was kept", async () => {
    const stored = await storeThrough(
      h,
      failure(
        tenant,
        "rate_limited",
        "429 Too Many Requests from payouts_api, Retry-After: 20",
        "Sync payouts",
        {
          category: "rate_limit_error",
          tool: "payouts_api",
        },
      ),
    );
    await h.pool.query("UPDATE reflections SET metadata = '{}' WHERE id = $1", [stored.reflectionId]);
    const listed = await api("GET", "/api/v1/reflections");
    const lesson = (listed.body.items as { id: string; metadata: unknown }[]).find(
      (r) => r.id === stored.reflectionId,
    );
    expect(lesson).toBeDefined();
    expect(lesson?.metadata).toBeNull();
  });
});
