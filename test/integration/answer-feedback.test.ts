import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insightLines } from "../../src/domain/evaluation/adaptive-insights.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { apiOf, failure, storeThrough } from "../support/api-requests.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";

/**
 * Users' votes reach evaluation: a 👎 on an agent's answer lowers its self-evaluation (the
 * evaluated quality kept beside it) and brings it into adaptive prompting; a 👎 on a lesson does too.
 */

const run = randomUUID().slice(0, 8);
const tenant = `answers-${run}`;
const other = `answers-other-${run}`;
const key = `key-answers-${run}-0123456789`;
const otherKey = `key-answers-other-${run}-0123456789`;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ env: { API_KEYS: `${key}:${tenant}:read+vote, ${otherKey}:${other}:read+vote` } });
});

afterAll(async () => {
  await h.close();
});

const api = apiOf(() => h, key);

/** A partial task with a good answer (the offline evaluator gives it more than 0.8): not a low-quality one. */
function answered(): TaskCompleted {
  return taskEvent({
    tenantId: tenant,
    outcome: "partial",
    error: undefined,
    scores: { alignment: 0.9, drift: 0.1 },
    task: {
      description: "Answer a billing question from the pricing page",
      query: "Which plan includes single sign-on, and how much does it cost per seat per month?",
      answer:
        "The Enterprise plan includes single sign-on; it costs 25 dollars per seat per month, billed annually, as the pricing page states.",
    },
  });
}

/** Publishes the task and answers its self-evaluation's quality, as the outcome carries it. */
async function processed(event: TaskCompleted): Promise<number> {
  await h.publish(event);
  const outputs = await h.waitForOutputs(event.eventId, 2);
  const outcome = outputs.find((o) => o.topic === h.config.topics.reflectionAccepted)?.value as
    { answerEvaluation?: { quality: number } } | undefined;
  const quality = outcome?.answerEvaluation?.quality;
  if (quality === undefined) throw new Error(`event ${event.eventId} has no answer evaluation`);
  return quality;
}

const issuesOf = async (k = key) =>
  ((await api("GET", "/api/v1/insights", { key: k })).body.common_issues ?? []) as {
    issue: string;
    count: number;
  }[];

describe("feedback on an agent's answer", () => {
  const first = answered();
  const second = answered();
  let judged = 0;

  beforeAll(async () => {
    [judged] = await Promise.all([processed(first), processed(second)]);
    expect(judged).toBeGreaterThan(0.6);
  });

  it("lowers the answer's self-evaluation with a 👎 and keeps the evaluated quality", async () => {
    expect((await issuesOf()).map((i) => i.issue)).not.toContain("Answer rated down by a user");
    const down = await api("POST", `/api/v1/answers/${first.loopId}/feedback`, {
      body: { rating: "down", comment: "the price is wrong", feedback_id: `afb-1-${run}` },
    });
    expect(down.status).toBe(201);
    expect(down.body).toMatchObject({
      status: "recorded",
      loop_id: first.loopId,
      latest_rating: "down",
      answers: [{ event_id: first.eventId, effective_quality: 0.3, should_retry: true }],
    });
    const row = await h.pool.query<{ quality: number; effective_quality: number; feedback_rating: string }>(
      `SELECT quality, effective_quality, feedback_rating FROM answer_evaluations
        WHERE tenant_id = $1 AND event_id = $2`,
      [tenant, first.eventId],
    );
    expect(row.rows[0]).toMatchObject({ feedback_rating: "down" });
    expect((down.body.answers as { judged_quality: number }[])[0]?.judged_quality).toBeCloseTo(judged, 5);
    expect(row.rows[0]?.quality).toBeCloseTo(judged, 5);
    expect(row.rows[0]?.effective_quality).toBeCloseTo(0.3, 5);
  });

  it("brings 👎-rated answers into adaptive prompting, with the user's comment in the closed vocabulary", async () => {
    const again = await api("POST", `/api/v1/answers/${second.loopId}/feedback`, {
      body: { rating: "down", comment: "the price is wrong" },
    });
    expect(again.status).toBe(201);
    // The insights route reads the store's `commonIssues`, the call the reflect stage makes before
    // generating; `insightLines` makes the prompt's lines of it.
    const issues = await issuesOf();
    expect(issues).toContainEqual({ issue: "Answer rated down by a user", count: 2 });
    const lines = insightLines(issues);
    expect(lines).toContain("Answers users rated down (in 2 recent low-quality results)");
    expect(lines).toContain("Incorrect answers (in 2 recent low-quality results)");
  });

  it("lets the latest vote decide: a 👍 afterwards raises it to at least 0.7", async () => {
    const up = await api("POST", `/api/v1/answers/${first.loopId}/feedback`, { body: { rating: "up" } });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      latest_rating: "up",
      answers: [{ should_retry: false }],
    });
    const [answer] = up.body.answers as { judged_quality: number; effective_quality: number }[];
    expect(answer?.effective_quality).toBe(Math.max(answer?.judged_quality ?? 0, 0.7));
    expect(await issuesOf()).not.toContainEqual(
      expect.objectContaining({ issue: "Answer rated down by a user" }),
    );
  });

  it("counts a repeated feedback id once, refuses its reuse, and hides other tenants' loops", async () => {
    const body = { rating: "down", feedback_id: `afb-1-${run}`, comment: "the price is wrong" };
    const repeated = await api("POST", `/api/v1/answers/${first.loopId}/feedback`, { body });
    expect(repeated.status).toBe(200);
    expect(repeated.body).toMatchObject({ status: "duplicate", latest_rating: "up" });
    const reused = await api("POST", `/api/v1/answers/${first.loopId}/feedback`, {
      body: { ...body, rating: "up" },
    });
    expect(reused.status).toBe(409);
    const hidden = await api("POST", `/api/v1/answers/${first.loopId}/feedback`, {
      key: otherKey,
      body: { rating: "down" },
    });
    expect(hidden.status).toBe(404);
    const unknown = await api("POST", `/api/v1/answers/no-such-loop-${run}/feedback`, {
      body: { rating: "down" },
    });
    expect(unknown.status).toBe(404);
  });
});

describe("feedback on a lesson reaches adaptive prompting", () => {
  it("lists lessons users rated down among the tenant's common issues", async () => {
    // Another tenant (the answers above left lessons of their own): two lessons of different kinds, stored one after the other (neither a repeat of the other).
    const stored = [
      await storeThrough(
        h,
        failure(
          other,
          "query_timeout",
          "Query on orders exceeded the 30s statement timeout",
          "Fetch order history",
        ),
      ),
      await storeThrough(
        h,
        failure(
          other,
          "rate_limited",
          "429 Too Many Requests from payouts_api, Retry-After: 20",
          "Sync payouts",
          {
            category: "rate_limit_error",
            tool: "payouts_api",
          },
        ),
      ),
    ];
    expect(await issuesOf(otherKey)).not.toContainEqual(
      expect.objectContaining({ issue: "Lesson rated down by a user" }),
    );
    for (const lesson of stored) {
      const down = await api("POST", "/api/v1/feedback", {
        key: otherKey,
        body: { reflection_id: lesson.reflectionId, rating: "down" },
      });
      expect(down.status).toBe(201);
    }
    expect(await issuesOf(otherKey)).toContainEqual({ issue: "Lesson rated down by a user", count: 2 });
    expect(insightLines(await issuesOf(otherKey))).toContain(
      "Lessons users rated down (in 2 recent low-quality results)",
    );
  });
});
