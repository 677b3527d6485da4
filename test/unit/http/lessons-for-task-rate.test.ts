import { afterAll, describe, expect, it, vi } from "vitest";
import type { LessonsForTask } from "../../../src/features/lessons/lessons-for-task.js";
import { apiTestServer } from "../../support/api-server.js";

/**
 * `POST /api/v1/lessons/for-task` has a rate per API key (LESSONS_FOR_TASK_REQUESTS_PER_MINUTE):
 * past it a key is answered 429 with Retry-After and its requests cost nothing more, while the
 * tenant's other keys are served.
 */
describe("lessons for a task: requests per API key", () => {
  let asked = 0;
  const forTask = {
    forTask: () => {
      asked += 1;
      return Promise.resolve({ floor: 0.3, checkedBy: "meaning", lessons: [], recordedFor: null });
    },
  } as unknown as LessonsForTask;
  const app = apiTestServer("rate-key-one:tenant-r:read,rate-key-two:tenant-r:read", {
    lessonsForTask: forTask,
    lessonsForTaskPerMinute: 3,
  });
  afterAll(async () => {
    await app.close();
  });
  const post = (key: string) =>
    app.inject({
      method: "POST",
      url: "/api/v1/lessons/for-task",
      headers: { authorization: `Bearer ${key}` },
      payload: { task: "Cancel a flight reservation" },
    });

  it("answers 429 with Retry-After past the key's rate, without asking for lessons, and serves the tenant's other key", async () => {
    // The clock stands still: no token comes back while the test runs.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      for (let i = 0; i < 3; i += 1) expect((await post("rate-key-one")).statusCode).toBe(200);
      const limited = await post("rate-key-one");
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(limited.json<{ error: string; message: string }>()).toMatchObject({
        error: "too_many_requests",
        message: expect.stringContaining("3 times a minute") as unknown,
      });
      expect(asked).toBe(3);
      expect((await post("rate-key-two")).statusCode).toBe(200);
      expect(asked).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });
});
