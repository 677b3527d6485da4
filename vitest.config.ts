import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
          // A guard against a hang, not a measure of speed (tests about speed assert CPU time, and
          // benchmarks measure it): on 2 cores shared with other work, loading the OpenTelemetry
          // SDK or starting worker threads took more than the default 5 s of wall time.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Real Kafka on 2 cores: files share one broker, so run them one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
