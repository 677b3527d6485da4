import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { countLessonsForTask } from "../../../src/observability/lessons-for-task-metrics.js";

describe("reflector_lessons_for_task_total", () => {
  it("counts each answer by what chose its lessons, and passes the answer on as it is", async () => {
    const registry = new Registry();
    const by: ("model" | "meaning")[] = ["model", "meaning", "model"];
    const counted = countLessonsForTask(
      {
        forTask: (_tenant: string, body: { n: number }) =>
          Promise.resolve({ checkedBy: by[body.n] ?? "meaning", n: body.n }),
      },
      registry,
    );
    for (const n of [0, 1, 2]) expect(await counted.forTask("t", { n })).toEqual({ checkedBy: by[n], n });
    const text = await registry.metrics();
    expect(text).toMatch(/^reflector_lessons_for_task_total\{checked_by="model"\} 2$/m);
    expect(text).toMatch(/^reflector_lessons_for_task_total\{checked_by="meaning"\} 1$/m);
  });
});
