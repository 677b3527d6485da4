import { describe, expect, it } from "vitest";
import type { MaintenanceStore, PruneCriteria } from "../../../src/maintenance/maintenance-ports.js";
import { runPrune } from "../../../src/maintenance/prune.js";

function setup() {
  const seen: PruneCriteria[] = [];
  const forgotten: { tenantId: string; signature: string }[][] = [];
  const store = {
    prune: (criteria: PruneCriteria) => {
      seen.push(criteria);
      return Promise.resolve({
        candidates: 3,
        keptRecent: 1,
        keptHelpful: 0,
        deleted: 2,
        removed: [
          { tenantId: "t", signature: "a" },
          { tenantId: "t", signature: "b" },
        ],
      });
    },
  } as unknown as MaintenanceStore;
  const deps = {
    store,
    evictor: {
      forget: (entries: readonly { tenantId: string; signature: string }[]) => {
        forgotten.push([...entries]);
        return Promise.resolve();
      },
    },
    clock: { now: () => new Date("2026-11-23T00:00:00.000Z") },
  };
  return { deps, seen, forgotten };
}

describe("runPrune", () => {
  it("computes the cutoff from the clock and evicts the deleted signatures from the cache", async () => {
    const { deps, seen, forgotten } = setup();
    const report = await runPrune(deps, {
      tenantId: null,
      olderThanDays: 90,
      maxImportance: 0.3,
      dryRun: false,
    });
    expect(seen[0]?.cutoff.toISOString()).toBe("2026-08-25T00:00:00.000Z");
    expect(report).toEqual({
      candidates: 3,
      keptRecent: 1,
      keptHelpful: 0,
      deleted: 2,
      cutoff: "2026-08-25T00:00:00.000Z",
      maxImportance: 0.3,
      dryRun: false,
    });
    expect(forgotten).toEqual([
      [
        { tenantId: "t", signature: "a" },
        { tenantId: "t", signature: "b" },
      ],
    ]);
  });

  it("leaves the cache alone in a dry run and refuses nonsense thresholds", async () => {
    const { deps, forgotten } = setup();
    await runPrune(deps, { tenantId: "t", olderThanDays: 1, maxImportance: 0, dryRun: true });
    expect(forgotten).toEqual([]);
    await expect(
      runPrune(deps, { tenantId: null, olderThanDays: 0, maxImportance: 0.3, dryRun: true }),
    ).rejects.toThrow("olderThanDays must be at least 1");
    await expect(
      runPrune(deps, { tenantId: null, olderThanDays: 90, maxImportance: 1.5, dryRun: true }),
    ).rejects.toThrow("maxImportance must be between 0 and 1");
  });
});
