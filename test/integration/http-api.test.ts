import { randomUUID } from "node:crypto";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPgLessonStore } from "../../src/adapters/postgres/pg-lesson-store.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { lessonEffectiveness } from "../../src/domain/feedback/lesson-effectiveness.js";
import { apiOf, failure, storeThrough, type Stored } from "../support/api-requests.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { problem } from "../support/problems.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The HTTP API against the real app: data comes from task events published through Kafka and
 * processed by the pipeline; nothing is inserted by hand. Two tenants with one key each.
 */

const run = randomUUID().slice(0, 8);
const tenantA = `api-a-${run}`;
const tenantB = `api-b-${run}`;
const keyA = `key-a-${run}-0123456789`;
const keyB = `key-b-${run}-0123456789`;

// The app's clock: real time plus a skew the effectiveness test moves forward (never back).
let skewMs = 0;
const clock = { now: () => new Date(Date.now() + skewMs) };

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    env: {
      API_KEYS: `${keyA}:${tenantA}:read+vote+decide+override, ${keyB}:${tenantB}:read+vote+decide+override`,
      LESSON_METRICS_REFRESH_MS: "0",
    },
    overrides: { clock },
  });
});

afterAll(async () => {
  await h.close();
});

const api = apiOf(() => h, keyA);
const store = (event: TaskCompleted): Promise<Stored> => storeThrough(h, event);

describe("operational endpoints", () => {
  it("answers /healthz, /readyz once the consumer joined, and /metrics in Prometheus format", async () => {
    expect((await api("GET", "/healthz", { key: null })).body).toEqual({ status: "ok" });
    const ready = await waitFor(async () => {
      const r = await api("GET", "/readyz", { key: null });
      return r.status === 200 ? r : undefined;
    });
    expect(ready.body).toMatchObject({
      status: "ready",
      checks: { consumer: true, stopping: true, postgres: true, redis: true },
    });
    expect(Object.values(ready.body.checks as Record<string, boolean>).every(Boolean)).toBe(true);
    const metrics = await api("GET", "/metrics", { key: null });
    expect(metrics.status).toBe(200);
    expect(metrics.headers["content-type"]).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(/^# HELP reflector_lessons /m);
    expect(metrics.text).toMatch(/^reflector_lessons\{verdict="insufficient_data"\} \d+$/m);
  });

  it("serves the app on a real socket too", async () => {
    const address = h.app.http.server.address();
    if (!address || typeof address === "string") throw new Error("not listening on TCP");
    const res = await fetch(`http://127.0.0.1:${String(address.port)}/healthz`);
    expect(res.status).toBe(200);
  });

  it("serves a valid OpenAPI 3 document that lists every route", async () => {
    const doc = await api("GET", "/openapi.json", { key: null });
    expect(doc.status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate(doc.body);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.body.openapi).toMatch(/^3\./);

    // Every route Fastify has (HEAD is implied by GET) is documented with its methods, and no more.
    const routes = new Map<string, Set<string>>();
    // printRoutes nests a path under its longest registered prefix, four characters per level.
    const stack: string[] = [];
    for (const line of h.app.http.printRoutes({ commonPrefix: false }).split("\n")) {
      // A segment may continue its parent's last word ("/api/v1/reflect" then "ions").
      const m = /^([^/\w:]*)([/\w:]\S*)(?: \(([^)]+)\))?/.exec(line);
      if (!m?.[2]) continue;
      const depth = Math.max(0, (m[1] ?? "").length / 4 - 1);
      stack.length = depth;
      const full = `${stack.join("")}${m[2]}`;
      stack.push(m[2]);
      if (!m[3] || full === "/*") continue;
      const methods = m[3]
        .split(",")
        .map((x) => x.trim().toLowerCase())
        .filter((x) => x !== "head");
      routes.set(full.replace(/:(\w+)/g, "{$1}"), new Set(methods));
    }
    const paths = doc.body.paths as Record<string, Record<string, unknown>>;
    const documented = new Map(Object.entries(paths).map(([p, ops]) => [p, new Set(Object.keys(ops))]));
    expect(documented).toEqual(routes);
    expect(routes.size).toBeGreaterThanOrEqual(11);
  });

  it("answers an unknown route with a JSON 404", async () => {
    const r = await api("GET", "/api/v1/nothing-here");
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("not_found");
    expect(r.body.message).toBe("no route GET /api/v1/nothing-here");
    const post = await api("POST", "/orchestrator/unknown", { body: {} });
    expect(post.status).toBe(404);
    expect(post.body.error).toBe("not_found");
  });
});

describe("authentication", () => {
  const protectedRoutes: ["GET" | "POST", string][] = [
    ["POST", "/orchestrator/loop-complete"],
    ["GET", "/orchestrator/guardrails-status/some-loop"],
    ["POST", "/orchestrator/override-guardrails/some-loop"],
    ["GET", "/api/v1/reflections"],
    ["GET", "/api/v1/reflections/signatures/0123456789abcdef"],
    ["GET", "/api/v1/insights"],
    ["POST", "/api/v1/feedback"],
    ["POST", "/api/v1/reflect"],
    ["GET", "/api/v1/reflect/some-event"],
    ["POST", "/api/v1/lessons/for-task"],
  ];

  it.each(protectedRoutes)("%s %s needs a known bearer key", async (method, url) => {
    const body = method === "POST" ? {} : undefined;
    const missing = await api(method, url, { key: null, body });
    expect(missing.status).toBe(401);
    expect(missing.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(missing.body).toEqual(
      problem(401, url, { error: "unauthorized", message: "missing bearer API key" }),
    );
    expect(missing.headers["www-authenticate"]).toBe("Bearer");
    const unknown = await api(method, url, { key: "not-a-key-of-anyone", body });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(problem(401, url, { error: "unauthorized", message: "unknown API key" }));
    const basic = await api(method, url, { authorization: `Basic ${keyA}`, body });
    expect(basic.status).toBe(401);
    expect(basic.body.message).toBe("missing bearer API key");
  });
});

describe("reflections and signatures", () => {
  let timeout: Stored;
  let lock: Stored;
  let disk: Stored;

  beforeAll(async () => {
    timeout = await store(
      failure(
        tenantA,
        "query_timeout",
        "Query on orders exceeded the 30s statement timeout",
        "Fetch order history",
      ),
    );
    lock = await store(
      failure(
        tenantA,
        "lock_timeout",
        "Lock wait on table invoices exceeded 15s",
        "Close the monthly invoices",
      ),
    );
    disk = await store(
      taskEvent({
        tenantId: tenantA,
        outcome: "failure",
        task: { description: "Export the customer report", goal: "Write report.csv" },
        error: {
          category: "resource_error",
          type: "disk_full",
          message: "No space left on device writing report.csv",
        },
        events: [],
      }),
    );
    // Tenant B has a lesson for the same failure as A's first one.
    await store(
      failure(
        tenantB,
        "query_timeout",
        "Query on orders exceeded the 30s statement timeout",
        "Fetch order history",
      ),
    );
  });

  it("lists the failures a lesson stands for, only to its tenant", async () => {
    const mine = await api("GET", `/api/v1/reflections/${timeout.reflectionId}/sources`);
    expect(mine.status).toBe(200);
    const sources = mine.body.sources as { event_id: string; loop_id: string; processed_at: string }[];
    expect(sources.map((s) => s.event_id)).toContain(timeout.eventId);
    expect(sources.every((s) => !Number.isNaN(Date.parse(s.processed_at)))).toBe(true);
    const theirs = await api("GET", `/api/v1/reflections/${timeout.reflectionId}/sources`, { key: keyB });
    expect(theirs.status).toBe(404);
  });

  it("lists only the caller's lessons, with judged and effective quality and effectiveness", async () => {
    const r = await api("GET", "/api/v1/reflections?k=100");
    expect(r.status).toBe(200);
    const items = r.body.items as Record<string, unknown>[];
    expect(new Set(items.map((i) => i.id))).toEqual(
      new Set([timeout.reflectionId, lock.reflectionId, disk.reflectionId]),
    );
    const first = items.find((i) => i.id === timeout.reflectionId);
    expect(first).toMatchObject({
      signature: timeout.signature,
      judged_quality: timeout.qualityScore,
      effective_quality: timeout.qualityScore,
      served: true,
      occurrences: 1,
      feedback: { helpful: 0, harmful: 0, latest_rating: null },
      effectiveness: { recurrences_after_publication: 0, verdict: "insufficient_data" },
      // The failing step of the trace: the timed-out query (step 1, e2), by its tool.
      attribution: { event_id: "e2", step_index: 1, tool_name: "postgres_query", confidence: 0.9 },
    });
    // The strategy is a memory of its own: its id, and the lesson's importance raised by 10 %.
    const strategyOf = first as { strategy_id: unknown; strategy_importance: number; importance: number };
    expect(String(strategyOf.strategy_id)).toMatch(/^[0-9a-f-]{36}$/);
    expect(strategyOf.strategy_importance).toBeCloseTo(Math.min(1, strategyOf.importance * 1.1), 5);
    const other = await api("GET", "/api/v1/reflections?k=100", { key: keyB });
    expect((other.body.items as unknown[]).length).toBe(1);
    expect((other.body.items as { id: string }[])[0]?.id).not.toBe(timeout.reflectionId);
  });

  it("filters by project, as the specification's lesson query does", async () => {
    const ids = async (project: string) =>
      ((await api("GET", `/api/v1/reflections?k=100&project=${project}`)).body.items as { id: string }[])
        .map((i) => i.id)
        .sort();
    // The three lessons of tenant A came from project "orders" (the events' default).
    expect(await ids("orders")).toEqual([timeout.reflectionId, lock.reflectionId, disk.reflectionId].sort());
    expect(await ids("no-such-project")).toEqual([]);
  });

  it("filters by text, tags and minimum importance", async () => {
    const text = await api("GET", "/api/v1/reflections?q=invoices%20lock");
    expect((text.body.items as { id: string }[]).map((i) => i.id)).toEqual([lock.reflectionId]);
    expect((text.body.items as { rank: number }[])[0]?.rank).toBeGreaterThan(0);
    expect((await api("GET", "/api/v1/reflections?q=zebra%20unicorn")).body.items).toEqual([]);

    const all = (await api("GET", "/api/v1/reflections?k=100")).body.items as {
      id: string;
      tags: string[];
      importance: number;
    }[];
    const diskTags = all.find((i) => i.id === disk.reflectionId)?.tags ?? [];
    const tag = diskTags.find(
      (t) => !all.filter((i) => i.id !== disk.reflectionId).some((i) => i.tags.includes(t)),
    );
    expect(
      tag,
      `a tag only the disk lesson has among ${JSON.stringify(all.map((i) => i.tags))}`,
    ).toBeDefined();
    const byTag = await api("GET", `/api/v1/reflections?tags=${encodeURIComponent(tag ?? "")}`);
    expect((byTag.body.items as { id: string }[]).map((i) => i.id)).toEqual([disk.reflectionId]);
    const bothTags = await api(
      "GET",
      `/api/v1/reflections?tags=${encodeURIComponent(`${tag ?? ""},no-such-tag`)}`,
    );
    expect(bothTags.body.items).toEqual([]);

    const importances = [...new Set(all.map((i) => i.importance))].sort((a, b) => a - b);
    const floor = importances.at(-1) ?? 1;
    const high = await api("GET", `/api/v1/reflections?min_importance=${String(floor)}`);
    const highIds = (high.body.items as { id: string }[]).map((i) => i.id).sort();
    expect(highIds).toEqual(
      all
        .filter((i) => i.importance >= floor)
        .map((i) => i.id)
        .sort(),
    );
    // With more than one importance among them, the floor leaves some lessons out.
    expect(importances.length === 1 || highIds.length < all.length).toBe(true);
  });

  it("pages with limit and offset without repeating or skipping", async () => {
    const page1 = await api("GET", "/api/v1/reflections?limit=2");
    expect(page1.body).toMatchObject({ limit: 2, offset: 0, next_offset: 2 });
    expect(page1.headers.deprecation).toBeUndefined();
    const page2 = await api("GET", "/api/v1/reflections?limit=2&offset=2");
    expect(page2.body).toMatchObject({ limit: 2, offset: 2, next_offset: null });
    const ids = [...(page1.body.items as { id: string }[]), ...(page2.body.items as { id: string }[])].map(
      (i) => i.id,
    );
    expect(ids).toHaveLength(3);
    expect(new Set(ids)).toEqual(new Set([timeout.reflectionId, lock.reflectionId, disk.reflectionId]));
  });

  it("still pages with the deprecated k, saying so in a Deprecation header", async () => {
    const page = await api("GET", "/api/v1/reflections?k=2");
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ limit: 2, k: 2, offset: 0, next_offset: 2 });
    expect(page.headers.deprecation).toBe("true");
    expect(page.headers.sunset).toBe("Sat, 05 Jun 2027 00:00:00 GMT");
    expect(page.headers.link).toBe('</docs#deprecations>; rel="deprecation"; type="text/html"');
    const sources = await api("GET", `/api/v1/reflections/${timeout.reflectionId}/sources?k=1`);
    expect(sources.status).toBe(200);
    expect(sources.body.sources).toHaveLength(1);
    expect(sources.headers.deprecation).toBe("true");
  });

  it.each([
    ["limit=0", "query.limit"],
    ["limit=101", "query.limit"],
    ["limit=2.5", "query.limit"],
    ["limit=", "query.limit"],
    ["limit=abc", "query.limit"],
    ["k=0", "query.k"],
    ["min_importance=1.5", "query.min_importance"],
    ["min_importance=-0.1", "query.min_importance"],
    ["offset=-1", "query.offset"],
    ["include_withheld=yes", "query.include_withheld"],
    ["limit=5&k=5", "query.k: k is the deprecated spelling of limit"],
    ["q=a&q=b", "query.q"],
  ])("rejects the query %s with a 400 naming %s", async (qs, field) => {
    const r = await api("GET", `/api/v1/reflections?${qs}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("bad_request");
    expect(r.body.message).toContain(field);
  });

  it("answers 'have I seen this error before?' with occurrences, first and last seen, and the lesson", async () => {
    const r = await api("GET", `/api/v1/reflections/signatures/${timeout.signature}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      signature: timeout.signature,
      seen_before: true,
      occurrences: 1,
      lesson: {
        reflection_id: timeout.reflectionId,
        judged_quality: timeout.qualityScore,
        attribution: { event_id: "e2", step_index: 1, tool_name: "postgres_query" },
      },
      lesson_withheld: null,
      feedback: { helpful: 0, harmful: 0, latest_rating: null },
      effectiveness: { recurrences_after_publication: 0, verdict: "insufficient_data" },
    });
    expect((r.body.lesson as { learning: string }).learning.length).toBeGreaterThan(10);
    expect(r.body.first_seen_at).toBe(r.body.last_seen_at);

    const unknown = await api("GET", "/api/v1/reflections/signatures/0000000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "not_found", seen_before: false, occurrences: 0 });
    const bad = await api("GET", "/api/v1/reflections/signatures/bad%20sig%3B");
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("params.signature");
  });

  it("never shows tenant A's signature to tenant B, even for the same failure", async () => {
    // Same failure, same signature: B sees its own row, never A's reflection id.
    const b = await api("GET", `/api/v1/reflections/signatures/${timeout.signature}`, { key: keyB });
    expect(b.status).toBe(200);
    expect((b.body.lesson as { reflection_id: string }).reflection_id).not.toBe(timeout.reflectionId);
    const lockForB = await api("GET", `/api/v1/reflections/signatures/${lock.signature}`, { key: keyB });
    expect(lockForB.status).toBe(404);
  });

  it("counts recurrences after the lesson was published and calls a lesson that keeps failing ineffective", async () => {
    const again = () =>
      store(
        failure(
          tenantA,
          "lock_timeout",
          "Lock wait on table invoices exceeded 27s",
          "Close the monthly invoices",
        ),
      );
    const second = await again();
    expect(second.reflectionId).toBe(lock.reflectionId);
    let r = await api("GET", `/api/v1/reflections/signatures/${lock.signature}`);
    expect(r.body).toMatchObject({
      occurrences: 2,
      effectiveness: { recurrences_after_publication: 1, verdict: "insufficient_data" },
    });
    expect(Date.parse(String(r.body.last_seen_at))).toBeGreaterThan(Date.parse(String(r.body.first_seen_at)));
    await again();
    await again();
    r = await api("GET", `/api/v1/reflections/signatures/${lock.signature}`);
    expect(r.body).toMatchObject({
      occurrences: 4,
      effectiveness: { recurrences_after_publication: 3, recurrences_per_week: 3, verdict: "ineffective" },
    });
    const listed = (await api("GET", "/api/v1/reflections?q=invoices")).body.items as Record<
      string,
      unknown
    >[];
    expect(listed[0]?.effectiveness).toMatchObject({
      recurrences_after_publication: 3,
      verdict: "ineffective",
    });

    // Metrics: one aggregate per verdict, no tenant or signature labels.
    const metrics = (await api("GET", "/metrics", { key: null })).text;
    const ineffective = /^reflector_lessons\{verdict="ineffective"\} (\d+)$/m.exec(metrics);
    expect(Number(ineffective?.[1])).toBeGreaterThanOrEqual(1);
    expect(metrics).toMatch(/^reflector_lesson_recurrences\{verdict="ineffective"\} \d+$/m);
    expect(metrics).not.toMatch(/reflector_lesson[^\n]*(tenant|signature)=/);
    // The committed outputs are counted: one generated lesson, then three reuses of it.
    const count = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? 0);
    expect(
      count(/^reflector_reflections_total\{verdict="[a-z_]+",generator="reused"\} (\d+)$/m),
    ).toBeGreaterThanOrEqual(3);
    expect(count(/^reflector_generator_calls_total\{generator="heuristic"\} (\d+)$/m)).toBeGreaterThanOrEqual(
      1,
    );
    const decisions = [
      ...metrics.matchAll(/^reflector_loop_decisions_total\{decision="(\w+)",reason="[\w.:-]+"\} (\d+)$/gm),
    ];
    expect(decisions.reduce((sum, m) => sum + Number(m[2]), 0)).toBeGreaterThanOrEqual(4);
  });

  it("counts the same verdicts for the metrics as the domain rule gives the API, after a quiet week too", async () => {
    skewMs += 8 * 86_400_000;
    const quiet = await api("GET", `/api/v1/reflections/signatures/${disk.signature}`);
    expect(quiet.body.effectiveness).toMatchObject({
      recurrences_after_publication: 0,
      verdict: "effective",
    });

    const now = clock.now();
    const lessons = createPgLessonStore(h.pool, { clock: { now: () => now } });
    const summary = await lessons.effectivenessSummary(tenantA);
    const rows = await h.pool.query<{ occurrences: number; first_seen_at: Date }>(
      "SELECT occurrences, first_seen_at FROM reflections WHERE tenant_id = $1",
      [tenantA],
    );
    const expected = { effective: 0, ineffective: 0, insufficient_data: 0 };
    for (const row of rows.rows) {
      expected[
        lessonEffectiveness({ occurrences: row.occurrences, publishedAt: row.first_seen_at, now }).verdict
      ] += 1;
    }
    expect({
      effective: summary.effective.lessons,
      ineffective: summary.ineffective.lessons,
      insufficient_data: summary.insufficient_data.lessons,
    }).toEqual(expected);
    expect(expected.effective).toBeGreaterThanOrEqual(2);
    expect(summary.ineffective.recurrences).toBe(3);
  });
});

describe("feedback over HTTP", () => {
  let lesson: Stored;

  beforeAll(async () => {
    lesson = await store(
      failure(
        tenantA,
        "rate_limited",
        "429 Too Many Requests from payouts_api, Retry-After: 20",
        "Sync payouts",
        // Another kind of failure than the other lessons of the tenant: a lesson of its own.
        { category: "rate_limit_error", tool: "payouts_api" },
      ),
    );
  });

  it("caps a thumbs-down at 0.3, keeps the judged score, and withholds the lesson", async () => {
    expect(lesson.qualityScore).toBeGreaterThan(0.5);
    const down = await api("POST", "/api/v1/feedback", {
      body: {
        reflection_id: lesson.reflectionId,
        rating: "down",
        comment: "did not help",
        feedback_id: `fb-1-${run}`,
      },
    });
    expect(down.status).toBe(201);
    expect(down.body).toEqual({
      status: "recorded",
      reflection_id: lesson.reflectionId,
      judged_quality: lesson.qualityScore,
      effective_quality: 0.3,
      served: false,
      feedback: { helpful: 0, harmful: 1, latest_rating: "down" },
    });
    const sig = await api("GET", `/api/v1/reflections/signatures/${lesson.signature}`);
    expect(sig.body).toMatchObject({
      seen_before: true,
      lesson: null,
      lesson_withheld: {
        reflection_id: lesson.reflectionId,
        judged_quality: lesson.qualityScore,
        effective_quality: 0.3,
      },
      feedback: { helpful: 0, harmful: 1, latest_rating: "down" },
    });
    const listed = (await api("GET", "/api/v1/reflections?q=payouts%20requests")).body.items as {
      id: string;
    }[];
    expect(listed).toEqual([]);
    const withheld = (await api("GET", "/api/v1/reflections?q=payouts%20requests&include_withheld=true")).body
      .items as Record<string, unknown>[];
    expect(withheld).toHaveLength(1);
    expect(withheld[0]).toMatchObject({ id: lesson.reflectionId, served: false, effective_quality: 0.3 });
    const row = await h.pool.query<{ quality_score: number }>(
      "SELECT quality_score FROM reflections WHERE id = $1",
      [lesson.reflectionId],
    );
    expect(row.rows[0]?.quality_score).toBe(lesson.qualityScore);
  });

  it("counts a repeated feedback id once and refuses to reuse it for another rating", async () => {
    const body = {
      reflection_id: lesson.reflectionId,
      rating: "down",
      comment: "did not help",
      feedback_id: `fb-1-${run}`,
    };
    const again = await api("POST", "/api/v1/feedback", { body });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: "duplicate", feedback: { helpful: 0, harmful: 1 } });
    const reused = await api("POST", "/api/v1/feedback", { body: { ...body, rating: "up" } });
    expect(reused.status).toBe(409);
    expect(reused.body.message).toMatch(/already used/);
  });

  it("lets the latest vote win: a later thumbs-up raises it to at least 0.7 and serves it again", async () => {
    const up = await api("POST", "/api/v1/feedback", {
      body: { reflection_id: lesson.reflectionId, rating: "up", user_id: "user-42" },
    });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      effective_quality: Math.max(lesson.qualityScore, 0.7),
      judged_quality: lesson.qualityScore,
      served: true,
      feedback: { helpful: 1, harmful: 1, latest_rating: "up" },
    });
    const sig = await api("GET", `/api/v1/reflections/signatures/${lesson.signature}`);
    expect(sig.body.lesson).toMatchObject({ reflection_id: lesson.reflectionId });
    const metrics = (await api("GET", "/metrics", { key: null })).text;
    expect(metrics).toMatch(/^reflector_feedback_total\{rating="down",result="recorded"\} 1$/m);
    expect(metrics).toMatch(/^reflector_feedback_total\{rating="up",result="recorded"\} 1$/m);
  });

  it("hides tenant A's reflection from tenant B's feedback (404, nothing counted)", async () => {
    const r = await api("POST", "/api/v1/feedback", {
      key: keyB,
      body: { reflection_id: lesson.reflectionId, rating: "down" },
    });
    expect(r.status).toBe(404);
    expect(r.body).toEqual(
      problem(404, "/api/v1/feedback", {
        error: "not_found",
        message: `no reflection ${lesson.reflectionId}`,
      }),
    );
    const unknown = await api("POST", "/api/v1/feedback", {
      body: { reflection_id: randomUUID(), rating: "up" },
    });
    expect(unknown.status).toBe(404);
    const sig = await api("GET", `/api/v1/reflections/signatures/${lesson.signature}`);
    expect(sig.body.feedback).toMatchObject({ helpful: 1, harmful: 1 });
  });

  it.each([
    ["malformed JSON", { raw: '{"reflection_id": ' }, /JSON/i],
    ["a wrong type", { body: { reflection_id: "x", rating: 1 } }, /body\.rating/],
    ["a bad uuid", { body: { reflection_id: "not-a-uuid", rating: "up" } }, /body\.reflection_id/],
    ["an unknown field", { body: { reflection_id: randomUUID(), rating: "up", stars: 5 } }, /stars/],
    ["a missing field", { body: { rating: "up" } }, /body\.reflection_id/],
    [
      "a too long comment",
      { body: { reflection_id: randomUUID(), rating: "up", comment: "x".repeat(2001) } },
      /body\.comment/,
    ],
    ["an array body", { body: [1, 2] }, /body/],
  ])("rejects %s with a 400 that says what is wrong", async (_name, request, message) => {
    const r = await api("POST", "/api/v1/feedback", request);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("bad_request");
    expect(String(r.body.message)).toMatch(message);
  });
});

describe("orchestrator endpoints", () => {
  const loopId = `loop-http-${run}`;

  it("decides a loop completion and answers with the orchestrator's snake_case fields", async () => {
    const r = await api("POST", "/orchestrator/loop-complete", {
      body: {
        loop_id: loopId,
        reflection_status: "done",
        orchestrator_persona: "SAGE",
        reflection_persona: "SAGE",
        alignment_score: 0.72,
        drift_score: 0.28,
        override_fatigue: false,
        override_max_reruns: false,
        override_by: null,
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      status: "success",
      loop_id: loopId,
      reflection_result: {
        alignment_score: 0.72,
        drift_score: 0.28,
        summary_valid: true,
        reflection_persona: "SAGE",
        bias_echo: false,
        reflection_fatigue: 0,
      },
      decision_result: {
        decision: "rerun",
        original_loop_id: loopId,
        new_loop_id: `${loopId}_r1`,
        rerun_reason: "alignment_threshold_not_met",
        rerun_number: 1,
        rerun_count: 1,
        max_reruns: 3,
      },
      orchestrator_persona: "SAGE",
    });
    expect(Date.parse(String(r.body.timestamp))).not.toBeNaN();
    // The decision also goes out on loop.decision, as for a task event, keyed by the loop.
    const published = await waitFor(
      () =>
        h.on(
          h.config.topics.loopDecision,
          (c) => c.value?.loopId === loopId && c.value.tenantId === tenantA,
        )[0],
    );
    expect(published.key).toBe(loopId);
    expect(published.value).toMatchObject({
      decision: "rerun",
      newLoopId: `${loopId}_r1`,
      rerunCount: 1,
      reason: "alignment_threshold_not_met",
    });
    expect(published.headers.ce_type).toBe("dev.reflector.loop.decision.v1");
  });

  it("reports the guardrail status of the tenant's own loop only", async () => {
    const r = await api("GET", `/orchestrator/guardrails-status/${loopId}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: "success",
      guardrails_status: {
        loop_id: loopId,
        rerun_count: 1,
        max_reruns: 3,
        rerun_limit_reached: false,
        bias_echo: false,
        reflection_fatigue: 0,
        fatigue_threshold_exceeded: false,
        force_finalize: false,
        rerun_reason: "alignment_threshold_not_met",
        alignment_score: 0.72,
        drift_score: 0.28,
        summary_valid: true,
        reflection_persona: "SAGE",
        pending_override: null,
      },
    });
    expect((r.body.guardrails_status as { rerun_trigger: string[] }).rerun_trigger.length).toBeGreaterThan(0);
    const b = await api("GET", `/orchestrator/guardrails-status/${loopId}`, { key: keyB });
    expect(b.status).toBe(404);
    expect(b.body).toEqual(
      problem(404, `/orchestrator/guardrails-status/${loopId}`, {
        error: "not_found",
        message: `no loop ${loopId} for this tenant`,
      }),
    );
    expect((await api("GET", "/orchestrator/guardrails-status/never-ran")).status).toBe(404);
  });

  it("overrides guardrails with the orchestrator's snake_case fields, in the caller's tenant only", async () => {
    const byB = await api("POST", `/orchestrator/override-guardrails/${loopId}`, {
      key: keyB,
      body: { override_fatigue: true, override_by: "intruder", override_reason: "should not reach A" },
    });
    // Loops are per tenant: B can only set an override on its own (not yet run) loop of that name.
    expect(byB.status).toBe(200);
    const stillClean = await api("GET", `/orchestrator/guardrails-status/${loopId}`);
    expect((stillClean.body.guardrails_status as { pending_override: unknown }).pending_override).toBeNull();

    const r = await api("POST", `/orchestrator/override-guardrails/${loopId}`, {
      body: {
        override_fatigue: true,
        override_max_reruns: false,
        override_by: "operator",
        override_reason: "Manual override to continue exploration",
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: "success",
      loop_id: loopId,
      override_fatigue: true,
      override_max_reruns: false,
      overridden_by: "operator",
      override_reason: "Manual override to continue exploration",
    });
    const status = await api("GET", `/orchestrator/guardrails-status/${loopId}`);
    expect((status.body.guardrails_status as { pending_override: unknown }).pending_override).toEqual({
      override_fatigue: true,
      override_max_reruns: false,
      overridden_by: "operator",
      override_reason: "Manual override to continue exploration",
    });
  });

  it.each([
    ["out-of-range alignment", { loop_id: "l1", alignment_score: 1.5 }, /body\.alignment_score/],
    ["a wrong type", { loop_id: "l1", override_fatigue: "yes" }, /body\.override_fatigue/],
    ["an unknown field", { loop_id: "l1", loop_idd: "x" }, /loop_idd/],
    ["a missing loop id", { reflection_status: "done" }, /body\.loop_id/],
    ["an unknown status", { loop_id: "l1", reflection_status: "maybe" }, /body\.reflection_status/],
    [
      "a status other than done",
      { loop_id: "l1", reflection_status: "failed" },
      /body\.reflection_status.*Must be 'done'/,
    ],
  ])("rejects a loop completion with %s (400)", async (_name, body, message) => {
    const r = await api("POST", "/orchestrator/loop-complete", { body });
    expect(r.status).toBe(400);
    expect(String(r.body.message)).toMatch(message);
  });

  it("rejects malformed override bodies (400)", async () => {
    const bad = await api("POST", `/orchestrator/override-guardrails/${loopId}`, { raw: "{oops" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("bad_request");
    const extra = await api("POST", `/orchestrator/override-guardrails/${loopId}`, { body: { force: true } });
    expect(extra.status).toBe(400);
    expect(String(extra.body.message)).toMatch(/force/);
  });
});

describe("insights (adaptive prompting)", () => {
  it("shows the tenant's common issues of low-quality answers, and none of them to another tenant", async () => {
    for (let i = 0; i < 2; i += 1) {
      const event = taskEvent({
        tenantId: tenantA,
        outcome: "partial",
        error: undefined,
        scores: { alignment: 0.9, drift: 0.1 },
        task: {
          description: "Answer a billing question from the pricing page",
          query: "Which plan includes SSO, and how much does it cost per seat per month?",
          answer: "I'm not sure, maybe the bigger one",
        },
      });
      await h.publish(event);
      await h.waitForOutputs(event.eventId, 2);
    }
    const a = await api("GET", "/api/v1/insights");
    expect(a.status).toBe(200);
    expect(a.body.tenant_id).toBe(tenantA);
    const issues = a.body.common_issues as { issue: string; count: number }[];
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]?.count).toBeGreaterThanOrEqual(2);
    const b = await api("GET", "/api/v1/insights", { key: keyB });
    expect(b.body).toEqual({ tenant_id: tenantB, common_issues: [] });
  });
});
