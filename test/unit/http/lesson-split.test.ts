import { afterAll, describe, expect, it } from "vitest";
import { createHash, createHmac } from "node:crypto";
import type {
  SplitAuditQuery,
  SplitRecord,
  SplitRequest,
  SplitResult,
  LessonSplitStore,
} from "../../../src/domain/memory/lesson-split.js";
import { apiTestServer, unusedStore } from "../../support/api-server.js";

const lessonId = "6f1c2d3e-4a5b-4c6d-8e7f-901234567890";
const asked: SplitRequest[] = [];
const listed: { tenantId: string; query: SplitAuditQuery }[] = [];
const recorded: SplitRecord = {
  id: "a1b2c3d4-0000-4000-8000-000000000001",
  lessonId,
  newLessonId: "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
  to: "new_lesson",
  moved: ["evt-2"],
  signaturesMoved: ["sig-b"],
  remaining: 2,
  actor: "cli:ops",
  at: new Date("2026-11-26T15:00:00.000Z"),
};
/** A lesson with sources evt-1..evt-3 of tenant-u; evt-2 came under the merged signature sig-b. */
const splits: LessonSplitStore = {
  listSplits: (tenantId, query) => {
    listed.push({ tenantId, query });
    return Promise.resolve(tenantId === "tenant-u" ? [recorded] : []);
  },
  splitSources: (request: SplitRequest): Promise<SplitResult> => {
    asked.push(request);
    if (request.tenantId !== "tenant-u" || request.lessonId !== lessonId)
      return Promise.resolve({ status: "not_found" });
    const missing = request.eventIds.filter((id) => !["evt-1", "evt-2", "evt-3"].includes(id));
    if (missing.length) return Promise.resolve({ status: "not_sources", missing });
    if (request.eventIds.length === 3) return Promise.resolve({ status: "all_sources", sources: 3 });
    return Promise.resolve({
      status: "split",
      lessonId,
      newLessonId: request.to === "new_lesson" ? "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e" : null,
      moved: [...request.eventIds],
      remaining: 3 - request.eventIds.length,
      signaturesMoved: request.eventIds.includes("evt-2") ? ["sig-b"] : [],
    });
  },
};

const auditKey = "audit-key-of-this-test-0123456789abcdef";
const logged: object[] = [];

const app = apiTestServer(
  "operator-key:tenant-u:read+override,reader-key:tenant-u:read,other-key:tenant-v:read+override",
  {
    stores: { loops: unusedStore, lessons: unusedStore, feedback: unusedStore, lessonSplits: splits },
    auditKey,
    logger: { info: (obj: object) => logged.push(obj), warn: () => undefined, error: () => undefined },
  },
);

afterAll(async () => {
  await app.close();
});

const split = (body: unknown, key = "operator-key", id = lessonId) =>
  app.inject({
    method: "POST",
    url: `/api/v1/reflections/${id}/split`,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    payload: JSON.stringify(body),
  });

describe("POST /api/v1/reflections/:id/split", () => {
  it("moves the named sources into a lesson of their own, for the caller's tenant", async () => {
    const res = await split({ source_event_ids: ["evt-2"] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      reflection_id: lessonId,
      new_reflection_id: "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e",
      moved_event_ids: ["evt-2"],
      remaining_sources: 2,
      moved_signatures: ["sig-b"],
    });
    // The audit names the key by a keyed fingerprint (HMAC under the audit key), never the key,
    // nor a plain hash of it that guessed keys could be tested against offline.
    const fingerprint = createHmac("sha256", auditKey)
      .update("operator-key")
      .digest("base64url")
      .slice(0, 22);
    expect(asked.at(-1)).toEqual({
      tenantId: "tenant-u",
      lessonId,
      eventIds: ["evt-2"],
      to: "new_lesson",
      actor: `api-key:${fingerprint}`,
    });
    const plain = createHash("sha256").update("operator-key").digest("hex");
    expect(asked.at(-1)?.actor).not.toContain(plain.slice(0, 12));
    // And the audit line is written, with the same actor and no key.
    expect(logged.at(-1)).toMatchObject({
      audit: "lesson_split",
      tenant: "tenant-u",
      actor: `api-key:${fingerprint}`,
      reflection_id: lessonId,
      moved: ["evt-2"],
    });
    expect(JSON.stringify(logged)).not.toContain("operator-key");
  });

  it("moves them back to unassigned when asked", async () => {
    const res = await split({ source_event_ids: ["evt-1", "evt-3"], to: "unassigned" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ new_reflection_id: null, moved_event_ids: ["evt-1", "evt-3"] });
  });

  it("needs the override role: a read-only key is refused and nothing is asked of the store", async () => {
    const before = asked.length;
    const res = await split({ source_event_ids: ["evt-2"] }, "reader-key");
    expect(res.statusCode).toBe(403);
    expect(asked.length).toBe(before);
  });

  it("answers 4xx with the reason for bad input, and the store is not asked", async () => {
    const before = asked.length;
    const empty = await split({ source_event_ids: [] });
    expect(empty.statusCode).toBe(400);
    const twice = await split({ source_event_ids: ["evt-1", "evt-1"] });
    expect(twice.statusCode).toBe(400);
    expect(twice.json()).toMatchObject({ message: "event id evt-1 is named twice" });
    expect((await split({ source_event_ids: ["evt-1"], to: "elsewhere" })).statusCode).toBe(400);
    expect((await split({ source_event_ids: ["evt-1"], extra: 1 })).statusCode).toBe(400);
    expect((await split({ source_event_ids: ["evt-1"] }, "operator-key", "not-a-uuid")).statusCode).toBe(400);
    expect(asked.length).toBe(before);
  });

  it("answers 400 naming ids that are not its sources, 409 for all of them, 404 for another tenant's lesson", async () => {
    const foreign = await split({ source_event_ids: ["evt-1", "evt-9"] });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({ error: "not_sources", missing: ["evt-9"] });
    const all = await split({ source_event_ids: ["evt-1", "evt-2", "evt-3"] });
    expect(all.statusCode).toBe(409);
    expect(all.json()).toMatchObject({ error: "all_sources" });
    const other = await split({ source_event_ids: ["evt-1"] }, "other-key");
    expect(other.statusCode).toBe(404);
    expect(asked.at(-1)?.tenantId).toBe("tenant-v");
  });
});

describe("GET /api/v1/reflections/splits", () => {
  const list = (query: string, key = "reader-key") =>
    app.inject({
      method: "GET",
      url: `/api/v1/reflections/splits${query}`,
      headers: { authorization: `Bearer ${key}` },
    });

  it("lists the caller's tenant's splits to a read-only key: who, when, which sources, from and to", async () => {
    const res = await list(`?reflection_id=${lessonId}&limit=10`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      splits: [
        {
          id: recorded.id,
          reflection_id: lessonId,
          new_reflection_id: recorded.newLessonId,
          to: "new_lesson",
          moved_event_ids: ["evt-2"],
          moved_signatures: ["sig-b"],
          remaining_sources: 2,
          actor: "cli:ops",
          split_at: "2026-11-26T15:00:00.000Z",
        },
      ],
    });
    expect(listed.at(-1)).toEqual({ tenantId: "tenant-u", query: { lessonId, limit: 10 } });
    const other = await list("", "other-key");
    expect(other.json()).toEqual({ splits: [] });
    expect(listed.at(-1)).toEqual({ tenantId: "tenant-v", query: { limit: 50 } });
  });

  it("refuses a bad filter or limit with the reason, and asks the store nothing", async () => {
    const before = listed.length;
    expect((await list("?reflection_id=nope")).statusCode).toBe(400);
    expect((await list("?limit=0")).statusCode).toBe(400);
    expect((await list("?limit=501")).statusCode).toBe(400);
    expect((await list("?tenant=tenant-v")).statusCode).toBe(400);
    expect((await list("", "no-such-key-here")).statusCode).toBe(401);
    expect(listed.length).toBe(before);
  });
});
