import { describe, expect, it } from "vitest";
import { createMetrics } from "../../../src/observability/metrics.js";

describe("process metrics", () => {
  it("keep the standard names stock Node.js dashboards read", async () => {
    const text = await createMetrics().registry.metrics();
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_start_time_seconds",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
      "nodejs_gc_duration_seconds",
    ]) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} `, "m"));
    }
    // Reflector's own metrics carry its prefix; the standard ones never do.
    expect(text).not.toMatch(/reflector_process_|reflector_nodejs_/);
  });
});
