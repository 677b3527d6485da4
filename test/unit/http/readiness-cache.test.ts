import { describe, expect, it } from "vitest";
import { cachedChecks } from "../../../src/http/http-server.js";

describe("readiness checks under a flood of probes", () => {
  it("runs the dependency checks once per interval, shared by concurrent probes", async () => {
    let now = 0;
    let runs = 0;
    const checks = cachedChecks(
      [
        {
          name: "postgres",
          check: () => {
            runs += 1;
            return Promise.resolve(true);
          },
        },
        { name: "redis", check: () => Promise.reject(new Error("down")) },
      ],
      1_000,
      () => now,
    );
    const answers = await Promise.all(Array.from({ length: 1_000 }, () => checks()));
    expect(runs).toBe(1);
    expect(answers[999]).toEqual({ postgres: true, redis: false });
    now = 999;
    await checks();
    expect(runs).toBe(1);
    now = 1_000;
    await checks();
    expect(runs).toBe(2);
  });
});
