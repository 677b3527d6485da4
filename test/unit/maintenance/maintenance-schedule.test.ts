import { afterEach, describe, expect, it, vi } from "vitest";
import type { ExclusiveRunner } from "../../../src/maintenance/maintenance-ports.js";
import { createMaintenanceSchedule } from "../../../src/maintenance/maintenance-schedule.js";
import { createLogger } from "../../../src/observability/logger.js";

afterEach(() => {
  vi.useRealTimers();
});

const free: ExclusiveRunner = async (_name, work) => ({ ran: true, value: await work() });

describe("maintenance schedule", () => {
  it("runs each enabled job every interval and none with interval 0", async () => {
    vi.useFakeTimers();
    const runs: string[] = [];
    const schedule = createMaintenanceSchedule({
      exclusive: free,
      logger: createLogger("silent"),
      jobs: [
        { name: "dream", intervalMs: 0, run: () => Promise.resolve(runs.push("dream")) },
        { name: "prune", intervalMs: 1000, run: () => Promise.resolve(runs.push("prune")) },
      ],
    });
    expect(schedule.start()).toEqual(["prune"]);
    await vi.advanceTimersByTimeAsync(999);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(2001);
    expect(runs).toEqual(["prune", "prune", "prune"]);
    await schedule.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toHaveLength(3);
  });

  it("skips a round when another replica holds the lock, and survives a failing run", async () => {
    vi.useFakeTimers();
    let calls = 0;
    let locked = true;
    const exclusive: ExclusiveRunner = async (_name, work) =>
      locked ? { ran: false } : { ran: true, value: await work() };
    const schedule = createMaintenanceSchedule({
      exclusive,
      logger: createLogger("silent"),
      jobs: [
        {
          name: "prune",
          intervalMs: 100,
          run: () => {
            calls += 1;
            return calls === 1 ? Promise.reject(new Error("postgres down")) : Promise.resolve();
          },
        },
      ],
    });
    schedule.start();
    await vi.advanceTimersByTimeAsync(250);
    expect(calls).toBe(0);
    locked = false;
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toBe(2);
    await schedule.stop();
  });

  it("waits for a run in progress when stopped", async () => {
    vi.useFakeTimers();
    let finished = false;
    const schedule = createMaintenanceSchedule({
      exclusive: free,
      logger: createLogger("silent"),
      jobs: [
        {
          name: "dream",
          intervalMs: 10,
          run: () =>
            new Promise<void>((resolve) =>
              setTimeout(() => {
                finished = true;
                resolve();
              }, 500),
            ),
        },
      ],
    });
    schedule.start();
    await vi.advanceTimersByTimeAsync(20);
    const stopping = schedule.stop();
    await vi.advanceTimersByTimeAsync(500);
    await stopping;
    expect(finished).toBe(true);
  });
});
