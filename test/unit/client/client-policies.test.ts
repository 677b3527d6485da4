import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createReflectorClient, ReflectorApiError, retryAfterMs } from "../../../src/client/index.js";

/**
 * The client's policies against a local HTTP server that answers what each test scripts: retries
 * on 429/503 honouring Retry-After, network errors retried only for idempotent calls, time limits,
 * problem details, the snake_case wire and its fallbacks for servers from before it.
 */
type Scripted = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let script: Scripted[] = [];
const seen: { method: string; url: string; body: string }[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => {
    body += chunk.toString();
  });
  req.on("end", () => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", body });
    const next = script.shift();
    if (next) next(req, body, res);
    else res.writeHead(500).end("unscripted");
  });
});
let baseUrl = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});
afterAll(
  () =>
    new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    ),
);
beforeEach(() => {
  script = [];
  seen.length = 0;
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Scripted =>
  (_req, _body, res) =>
    res
      .writeHead(status, {
        "content-type": status >= 400 ? "application/problem+json" : "application/json",
        ...headers,
      })
      .end(JSON.stringify(body));
const hangUp: Scripted = (req) => req.socket.destroy();

const waits: number[] = [];
function client(extra: Parameters<typeof createReflectorClient>[0]["retry"] = {}) {
  waits.length = 0;
  return createReflectorClient({
    baseUrl,
    apiKey: "policy-key",
    retry: { baseDelayMs: 100, maxDelayMs: 1_000, ...extra },
    // Waits are recorded, not slept: the test is about how long the client would wait.
    sleep: (ms: number) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
  });
}

const lessonsAnswer = { lessons: [], floor: 0.28, recorded_for: null, checked_by: "meaning" };

describe("retries", () => {
  it("retries 429 and 503, waiting what Retry-After says (seconds or an HTTP date), else backing off", async () => {
    const inTwoSeconds = new Date(Date.now() + 2_000).toUTCString();
    script = [
      json(429, { error: "too_many_requests" }, { "retry-after": "3" }),
      json(503, { error: "unavailable" }, { "retry-after": inTwoSeconds }),
      json(503, { error: "unavailable" }),
      json(200, lessonsAnswer),
    ];
    const answer = await client().lessonsForTask({ task: "export orders" });
    expect(answer.checkedBy).toBe("meaning");
    expect(seen).toHaveLength(4);
    // 3 s plus jitter; about 2 s (a date, whole seconds) plus jitter; full jitter of 100 × 2² ms.
    expect(waits[0]).toBe(3_000 + 50);
    expect(waits[1]).toBeGreaterThan(900);
    expect(waits[1]).toBeLessThanOrEqual(2_050);
    expect(waits[2]).toBe(200);
  });

  it("gives up after its retries, and at once on a Retry-After longer than it may wait, with the problem", async () => {
    script = [json(503, { error: "unavailable" }), json(503, { error: "unavailable" })];
    const err = await client({ retries: 1 })
      .insights()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReflectorApiError);
    expect(seen).toHaveLength(2);
    script = [json(429, { title: "Too many requests", status: 429 }, { "retry-after": "3600" })];
    const long = await client()
      .insights()
      .catch((e: unknown) => e as ReflectorApiError);
    expect(long).toMatchObject({ status: 429, retryAfterMs: 3_600_000 });
    expect(seen).toHaveLength(3);
  });

  it("does not retry other errors", async () => {
    script = [json(409, { error: "conflict", message: "feedback_id reused" })];
    await expect(client().feedback({ reflectionId: "r", rating: "up" })).rejects.toMatchObject({
      status: 409,
    });
    expect(seen).toHaveLength(1);
  });

  it("retries a network error for an idempotent call (a vote carries its id, so it counts once)", async () => {
    script = [hangUp, json(201, { status: "recorded", reflection_id: "r-1", effective_quality: 0.7 })];
    const answer = await client().feedback({ reflectionId: "r-1", rating: "up" });
    expect(answer).toMatchObject({ status: "recorded", reflectionId: "r-1", effectiveQuality: 0.7 });
    const [first, second] = seen.map((s) => JSON.parse(s.body) as Record<string, unknown>);
    expect(first?.feedback_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(second?.feedback_id).toBe(first?.feedback_id);
  });

  it("times an attempt out, retries it, and stops at once when the caller aborts", async () => {
    const slow: Scripted = (_req, _body, res) => setTimeout(() => res.writeHead(200).end("{}"), 300);
    script = [slow, json(200, { common_issues: [{ issue: "shallow", count: 2 }] })];
    const answer = await client().insights({ timeoutMs: 50 });
    expect(answer.commonIssues).toEqual([{ issue: "shallow", count: 2 }]);
    expect(seen).toHaveLength(2);
    const abort = new AbortController();
    script = [slow];
    const call = client().insights({ signal: abort.signal });
    setTimeout(() => {
      abort.abort();
    }, 20);
    await expect(call).rejects.toThrow();
    expect(waits).toEqual([]);
  });
});

describe("errors", () => {
  it("carries RFC 9457 problem details and still reads the old {error, message}", async () => {
    script = [
      json(400, {
        type: "/problems/validation",
        title: "The request is invalid",
        status: 400,
        detail: "body.rating: Invalid option",
        instance: "/api/v1/feedback",
        error: "bad_request",
        issues: ["body.rating: Invalid option"],
      }),
    ];
    const err = (await client()
      .feedback({ reflectionId: "r", rating: "up" })
      .catch((e: unknown) => e)) as ReflectorApiError;
    expect(err).toMatchObject({
      status: 400,
      error: "bad_request",
      type: "/problems/validation",
      title: "The request is invalid",
      detail: "body.rating: Invalid option",
      instance: "/api/v1/feedback",
      issues: ["body.rating: Invalid option"],
    });
    script = [json(404, { error: "not_found", message: "no such lesson" })];
    const old = (await client()
      .reflectionSources("r")
      .catch((e: unknown) => e)) as ReflectorApiError;
    expect(old.message).toBe("reflector answered 404 not_found: no such lesson");
    expect(old.detail).toBe("no such lesson");
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-12-05T10:00:00Z");
    expect(retryAfterMs("5", now)).toBe(5_000);
    expect(retryAfterMs("Sat, 05 Dec 2026 10:00:07 GMT", now)).toBe(7_000);
    expect(retryAfterMs("Sat, 05 Dec 2026 09:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe("the wire", () => {
  it("sends lessons for a task in snake_case and reads the answer in either spelling", async () => {
    script = [
      json(200, {
        lessons: [
          { reflection_id: "r-1", strategy_text: "s", prompt: "p", applied: { helped: 1, failed_again: 0 } },
        ],
        floor: 0.3,
        recorded_for: "loop-1",
        checked_by: "model",
      }),
    ];
    const answer = await client().lessonsForTask({
      task: "t",
      agentId: "a",
      minImportance: 0.4,
      loopId: "loop-1",
    });
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({
      task: "t",
      agent_id: "a",
      min_importance: 0.4,
      loop_id: "loop-1",
    });
    expect(answer).toEqual({
      lessons: [
        { reflectionId: "r-1", strategyText: "s", prompt: "p", applied: { helped: 1, failedAgain: 0 } },
      ],
      floor: 0.3,
      recordedFor: "loop-1",
      checkedBy: "model",
    });
  });

  it("asks a server from before snake_case again in camelCase, and pages with k where limit is unknown", async () => {
    const c = client();
    script = [
      json(400, { error: "bad_request", message: 'Unrecognized key: "agent_id"' }),
      json(200, { lessons: [{ reflectionId: "r-2", prompt: "p" }], floor: 0.28 }),
      json(200, { lessons: [], floor: 0.28 }),
    ];
    expect((await c.lessonsForTask({ task: "t", agentId: "a" })).lessons).toEqual([
      { reflectionId: "r-2", prompt: "p" },
    ]);
    await c.lessonsForTask({ task: "t", projectId: "p" });
    expect(seen.map((s) => JSON.parse(s.body) as unknown)).toEqual([
      { task: "t", agent_id: "a" },
      { task: "t", agentId: "a" },
      { task: "t", projectId: "p" },
    ]);
    seen.length = 0;
    script = [
      json(400, {
        error: "bad_request",
        message: 'Unrecognized key: "limit"',
        issues: ['Unrecognized key: "limit"'],
      }),
      json(200, { items: [{ id: "r-3", strategy_text: "s" }], next_offset: null }),
    ];
    const page = await c.listReflections({ q: "timeout", limit: 3 });
    expect(page).toEqual({ items: [{ id: "r-3", strategyText: "s" }], nextOffset: null });
    expect(seen.map((s) => s.url)).toEqual([
      "/api/v1/reflections?q=timeout&limit=3",
      "/api/v1/reflections?q=timeout&k=3",
    ]);
  });

  it("reflects on a run: an agent run goes as an OTLP export, an event as it is; a pending answer is waited for", async () => {
    const outcome = {
      event_id: "e-1",
      status: "processed",
      verdict: "accepted_with_warnings",
      decision: { decision: "rerun", new_loop_id: "l_r1", lessons: [] },
    };
    script = [json(200, outcome)];
    const answer = await client().reflect({ loopId: "l", agent: "a", task: "t", steps: [] });
    expect(seen[0]).toMatchObject({ method: "POST", url: "/api/v1/reflect" });
    expect(JSON.parse(seen[0]?.body ?? "")).toHaveProperty("resourceSpans");
    expect(answer).toMatchObject({ verdict: "accepted_with_warnings", decision: { newLoopId: "l_r1" } });
    seen.length = 0;
    script = [
      json(
        202,
        { event_id: "e 1", status: "pending", outcome_url: "/api/v1/reflect/e%201" },
        { "retry-after": "1" },
      ),
      json(404, { error: "not_found", message: "no run e 1 reflected for this tenant (yet)" }),
      json(200, { ...outcome, event_id: "e 1", status: "replayed" }),
    ];
    const waited = await client().reflect({ eventId: "e 1", loopId: "l" }, { wait: { intervalMs: 1 } });
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ eventId: "e 1", loopId: "l" });
    expect(seen.slice(1).map((s) => `${s.method} ${s.url}`)).toEqual([
      "GET /api/v1/reflect/e%201",
      "GET /api/v1/reflect/e%201",
    ]);
    expect(waited).toMatchObject({ eventId: "e 1", status: "replayed", verdict: "accepted_with_warnings" });
  });
});
