import { afterAll, describe, expect, it } from "vitest";
import { apiTestServer, type AnyApiStore } from "../../support/api-server.js";
import type { LessonSource } from "../../../src/features/lessons/lesson-store.js";

const lessonId = "6f1c2d3e-4a5b-4c6d-8e7f-901234567890";
const asked: { tenantId: string; id: string; limit: number }[] = [];
const sources: LessonSource[] = [
  { eventId: "evt-1", loopId: "loop-1", signature: "sig-a", processedAt: new Date("2026-11-26T09:00:00Z") },
  { eventId: "evt-2", loopId: "loop-2", signature: "sig-b", processedAt: new Date("2026-11-26T09:05:00Z") },
];
const store = new Proxy(
  {
    sourcesOf: (tenantId: string, id: string, limit: number) => {
      asked.push({ tenantId, id, limit });
      return Promise.resolve(id === lessonId ? sources : null);
    },
  },
  {
    get: (target, prop) =>
      prop in target ? target[prop as "sourcesOf"] : () => Promise.reject(new Error("not used")),
  },
) as unknown as AnyApiStore;

const app = apiTestServer("unit-test-key:tenant-u:read", {
  stores: { loops: store, lessons: store, feedback: store },
});

afterAll(async () => {
  await app.close();
});

const get = (url: string) =>
  app.inject({ method: "GET", url, headers: { authorization: "Bearer unit-test-key" } });

describe("GET /api/v1/reflections/:id/sources", () => {
  it("lists the failures a lesson stands for, for the caller's tenant", async () => {
    const res = await get(`/api/v1/reflections/${lessonId}/sources?k=50`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      reflection_id: lessonId,
      sources: [
        {
          event_id: "evt-1",
          loop_id: "loop-1",
          signature: "sig-a",
          processed_at: "2026-11-26T09:00:00.000Z",
        },
        {
          event_id: "evt-2",
          loop_id: "loop-2",
          signature: "sig-b",
          processed_at: "2026-11-26T09:05:00.000Z",
        },
      ],
    });
    expect(asked.at(-1)).toEqual({ tenantId: "tenant-u", id: lessonId, limit: 50 });
  });

  it("answers 404 for a lesson the tenant does not have, 400 for an id that is not one", async () => {
    expect((await get("/api/v1/reflections/00000000-0000-4000-8000-000000000000/sources")).statusCode).toBe(
      404,
    );
    expect((await get("/api/v1/reflections/not-a-uuid/sources")).statusCode).toBe(400);
  });
});
