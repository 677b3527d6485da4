import { randomUUID } from "node:crypto";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiOf, failure, storeThrough, type Stored } from "../support/api-requests.js";
import { startHarness, type Harness } from "../support/harness.js";
import { waitFor } from "../support/wait-for.js";

/**
 * Feedback read from the reflection.feedback topic by the feedback consumer, seen through the
 * HTTP API: counted once per feedback id, the latest vote by its own time, bad records
 * dead-lettered with their reasons. Two tenants with one key each; lessons come from task events
 * the pipeline processed.
 */

const run = randomUUID().slice(0, 8);
const tenantA = `fb-a-${run}`;
const tenantB = `fb-b-${run}`;
const keyA = `key-fa-${run}-0123456789`;
const keyB = `key-fb-${run}-0123456789`;

let h: Harness;
let feedbackProducer: Producer;
const api = apiOf(() => h, keyA);
const store = (event: Parameters<typeof storeThrough>[1]): Promise<Stored> => storeThrough(h, event);

beforeAll(async () => {
  h = await startHarness({
    env: {
      API_KEYS: `${keyA}:${tenantA}:read+vote, ${keyB}:${tenantB}:read+vote`,
      LESSON_METRICS_REFRESH_MS: "0",
    },
  });
  feedbackProducer = h.kafka.producer();
  await feedbackProducer.connect();
});

afterAll(async () => {
  await feedbackProducer.disconnect();
  await h.close();
});

describe("feedback from the reflection.feedback topic", () => {
  let lesson: Stored;

  beforeAll(async () => {
    lesson = await store(
      failure(
        tenantA,
        "connection_reset",
        "ECONNRESET: socket hang up calling payments.internal",
        "Call the payments service",
        { category: "network_error", tool: "payments_http" },
      ),
    );
  });

  async function publishFeedback(value: unknown, key = lesson.reflectionId) {
    const [meta] = await feedbackProducer.send({
      topic: h.config.topics.reflectionFeedback,
      messages: [{ key, value: typeof value === "string" ? value : JSON.stringify(value) }],
    });
    if (!meta) throw new Error("no record metadata");
    return { partition: meta.partition, offset: meta.baseOffset };
  }

  const feedbackCounts = async () =>
    (await api("GET", `/api/v1/reflections/signatures/${lesson.signature}`)).body.feedback as {
      helpful: number;
      harmful: number;
      latest_rating: string | null;
    };

  it("records valid feedback once even when it is delivered twice, latest vote by its own time", async () => {
    const base = { schemaVersion: 1, tenantId: tenantA, reflectionId: lesson.reflectionId };
    const up = {
      ...base,
      feedbackId: `k-up-${run}`,
      rating: "up",
      occurredAt: "2026-11-20T12:00:00.000Z",
      userId: "u1",
    };
    // Older than the thumbs-up although it arrives later: it counts, but does not decide.
    const down = {
      ...base,
      feedbackId: `k-down-${run}`,
      rating: "down",
      occurredAt: "2026-11-20T11:00:00.000Z",
    };
    await publishFeedback(up);
    await publishFeedback(up);
    await publishFeedback(down);
    const counts = await waitFor(async () => {
      const c = await feedbackCounts();
      return c.harmful === 1 ? c : undefined;
    });
    expect(counts).toEqual({ helpful: 1, harmful: 1, latest_rating: "up" });
    const sig = await api("GET", `/api/v1/reflections/signatures/${lesson.signature}`);
    expect(sig.body.lesson).toMatchObject({ effective_quality: Math.max(lesson.qualityScore, 0.7) });
    const rows = await h.pool.query<{ feedback_id: string; source: string; user_id: string | null }>(
      "SELECT feedback_id, source, user_id FROM reflection_feedback WHERE reflection_id = $1 ORDER BY feedback_id",
      [lesson.reflectionId],
    );
    expect(rows.rows).toEqual([
      { feedback_id: `k-down-${run}`, source: "kafka", user_id: null },
      { feedback_id: `k-up-${run}`, source: "kafka", user_id: "u1" },
    ]);
  });

  it("counts a vote dated in the future as given when read, so it cannot outrank later votes", async () => {
    await publishFeedback({
      schemaVersion: 1,
      tenantId: tenantA,
      reflectionId: lesson.reflectionId,
      feedbackId: `k-future-${run}`,
      rating: "down",
      occurredAt: "2099-01-01T00:00:00.000Z",
    });
    await waitFor(async () => ((await feedbackCounts()).harmful === 2 ? true : undefined));
    expect((await feedbackCounts()).latest_rating).toBe("down");
    const up = await api("POST", "/api/v1/feedback", {
      body: { reflection_id: lesson.reflectionId, rating: "up" },
    });
    expect(up.body).toMatchObject({
      served: true,
      feedback: { helpful: 2, harmful: 2, latest_rating: "up" },
    });
  });

  it("dead-letters an unknown reflection, another tenant's reflection and malformed messages with their reasons", async () => {
    const base = { schemaVersion: 1, rating: "down", occurredAt: "2026-11-20T13:00:00.000Z" };
    const unknownId = randomUUID();
    const cases = [
      {
        meta: await publishFeedback({
          ...base,
          feedbackId: `k-u-${run}`,
          tenantId: tenantA,
          reflectionId: unknownId,
        }),
        code: "FEEDBACK_UNKNOWN_REFLECTION",
        reason: new RegExp(`no reflection ${unknownId}`),
      },
      {
        meta: await publishFeedback({
          ...base,
          feedbackId: `k-b-${run}`,
          tenantId: tenantB,
          reflectionId: lesson.reflectionId,
        }),
        code: "FEEDBACK_UNKNOWN_REFLECTION",
        reason: new RegExp(`tenant ${tenantB} has no reflection`),
      },
      { meta: await publishFeedback("{not json"), code: "DECODE_FAILED", reason: /not JSON/ },
      {
        meta: await publishFeedback({
          ...base,
          feedbackId: `k-x-${run}`,
          tenantId: tenantA,
          reflectionId: lesson.reflectionId,
          rating: "meh",
        }),
        code: "SCHEMA_INVALID",
        reason: /rating/,
      },
      {
        meta: await publishFeedback({
          ...base,
          schemaVersion: 2,
          feedbackId: `k-v-${run}`,
          tenantId: tenantA,
        }),
        code: "UNSUPPORTED_SCHEMA_VERSION",
        reason: /schemaVersion 2/,
      },
    ];
    const topic = h.config.topics.reflectionFeedback;
    for (const c of cases) {
      const letter = await waitFor(() =>
        h
          .on(h.config.topics.deadLetter)
          .find(
            (d) =>
              d.headers["reflector.original.topic"] === topic &&
              d.headers["reflector.original.partition"] === String(c.meta.partition) &&
              d.headers["reflector.original.offset"] === c.meta.offset,
          ),
      );
      expect(letter.headers["reflector.error.code"], c.code).toBe(c.code);
      expect(letter.headers["reflector.error.message"]).toMatch(c.reason);
      expect(letter.headers["reflector.consumer.group"]).toBe(`${h.config.kafka.groupId}.feedback`);
    }
    // Nothing of the bad messages was counted on the lesson.
    expect(await feedbackCounts()).toMatchObject({ helpful: 2, harmful: 2 });
  });
});
