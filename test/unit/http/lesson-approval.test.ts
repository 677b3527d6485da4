import { createHmac } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { apiTestServer, unusedStore, type AnyApiStore } from "../../support/api-server.js";

/**
 * An operator's approval of a lesson for wide serving (`POST /api/v1/reflections/:id/approve`):
 * the `override` role only, scoped to the key's tenant, audited by a keyed fingerprint of the key.
 */

const lessonId = "6f1c2d3e-4a5b-4c6d-8e7f-901234567890";
const approvedAt = new Date("2026-12-05T04:00:00.000Z");
const asked: { tenantId: string; id: string; actor: string }[] = [];
const lessons: AnyApiStore = Object.assign(Object.create(unusedStore) as AnyApiStore, {
  approveForServing: (tenantId: string, id: string, actor: string, at: Date) => {
    asked.push({ tenantId, id, actor });
    if (tenantId !== "tenant-u" || id !== lessonId) return Promise.resolve(null);
    return Promise.resolve({ approvedAt: at, approvedBy: actor, occurrences: 1 });
  },
});

const auditKey = "audit-key-of-this-test-0123456789abcdef";
const logged: object[] = [];
const app = apiTestServer(
  "operator-key:tenant-u:read+override,reader-key:tenant-u:read+vote+decide,other-key:tenant-v:read+override",
  {
    stores: { loops: unusedStore, lessons, feedback: unusedStore },
    clock: { now: () => approvedAt },
    auditKey,
    logger: { info: (obj: object) => logged.push(obj), warn: () => undefined, error: () => undefined },
  },
);

afterAll(async () => {
  await app.close();
});

const approve = (key: string, id = lessonId) =>
  app.inject({
    method: "POST",
    url: `/api/v1/reflections/${id}/approve`,
    headers: { authorization: `Bearer ${key}` },
  });

describe("POST /api/v1/reflections/:id/approve", () => {
  it("approves the tenant's lesson for an override key, and audits it by the key's keyed fingerprint", async () => {
    const res = await approve("operator-key");
    expect(res.statusCode).toBe(200);
    const fingerprint = `api-key:${createHmac("sha256", auditKey).update("operator-key").digest("base64url").slice(0, 22)}`;
    expect(res.json()).toEqual({
      reflection_id: lessonId,
      approved_at: approvedAt.toISOString(),
      approved_by: fingerprint,
      occurrences: 1,
    });
    expect(asked.at(-1)).toEqual({ tenantId: "tenant-u", id: lessonId, actor: fingerprint });
    expect(logged.at(-1)).toMatchObject({
      audit: "lesson_approved",
      tenant: "tenant-u",
      actor: fingerprint,
      reflection_id: lessonId,
    });
    expect(JSON.stringify(logged)).not.toContain("operator-key");
  });

  it("refuses a key without the override role, whatever else it may do", async () => {
    const before = asked.length;
    const res = await approve("reader-key");
    expect(res.statusCode).toBe(403);
    expect(asked).toHaveLength(before);
  });

  it("answers 404 for another tenant's lesson, and for one that does not exist", async () => {
    expect((await approve("other-key")).statusCode).toBe(404);
    expect(asked.at(-1)?.tenantId).toBe("tenant-v");
    expect((await approve("operator-key", "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e")).statusCode).toBe(404);
  });

  it("answers 400 for an id that is not a lesson id", async () => {
    expect((await approve("operator-key", "not-a-uuid")).statusCode).toBe(400);
  });
});
