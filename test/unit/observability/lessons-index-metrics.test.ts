import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { registerLessonIndexGauges } from "../../../src/observability/lessons-index-metrics.js";

describe("the lessons index's gauges", () => {
  it("read the index's bytes, tenants and lessons held and not held at each scrape", async () => {
    const registry = new Registry();
    let size = { tenants: 2, lessons: 30, notHeld: 0, bytes: 61_000 };
    registerLessonIndexGauges({ size: () => size }, registry);
    expect(await registry.metrics()).toMatch(/^reflector_lessons_index_bytes 61000$/m);
    size = { tenants: 1, lessons: 10, notHeld: 25, bytes: 20_500 };
    const text = await registry.metrics();
    expect(text).toMatch(/^reflector_lessons_index_bytes 20500$/m);
    expect(text).toMatch(/^reflector_lessons_index_tenants 1$/m);
    expect(text).toMatch(/^reflector_lessons_index_lessons\{held="yes"\} 10$/m);
    expect(text).toMatch(/^reflector_lessons_index_lessons\{held="no"\} 25$/m);
  });
});
