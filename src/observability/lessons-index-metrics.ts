import { Gauge, type Registry } from "prom-client";

/** What the lessons-for-task index reports of itself (`LessonIndex.size()`). */
export interface LessonIndexSize {
  tenants: number;
  lessons: number;
  notHeld: number;
  bytes: number;
}

/**
 * Gauges of the in-process index of lessons for a task, read at each scrape:
 * `reflector_lessons_index_bytes` (estimated bytes held, against `LESSONS_INDEX_MAX_BYTES`),
 * `reflector_lessons_index_tenants` (tenants held) and `reflector_lessons_index_lessons{held}`
 * (lessons held, and lessons of held tenants not held because one tenant alone is over half the
 * budget: those are never served).
 */
export function registerLessonIndexGauges(index: { size(): LessonIndexSize }, registry: Registry): void {
  new Gauge({
    name: "reflector_lessons_index_bytes",
    help: "Estimated bytes of lessons held in memory for lessons for a task (bounded by LESSONS_INDEX_MAX_BYTES).",
    registers: [registry],
    collect() {
      this.set(index.size().bytes);
    },
  });
  new Gauge({
    name: "reflector_lessons_index_tenants",
    help: "Tenants whose lessons are held in memory for lessons for a task.",
    registers: [registry],
    collect() {
      this.set(index.size().tenants);
    },
  });
  new Gauge({
    name: "reflector_lessons_index_lessons",
    help: "Lessons of the tenants held, held in memory (held=yes) or not held because the tenant alone is over half of LESSONS_INDEX_MAX_BYTES (held=no, never served).",
    labelNames: ["held"] as const,
    registers: [registry],
    collect() {
      const size = index.size();
      this.set({ held: "yes" }, size.lessons);
      this.set({ held: "no" }, size.notHeld);
    },
  });
}
