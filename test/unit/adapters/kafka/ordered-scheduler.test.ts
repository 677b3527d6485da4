import { describe, expect, it } from "vitest";
import {
  loopFamilyKey,
  PartitionScheduler,
  SlotPool,
} from "../../../../src/adapters/kafka/ordered-scheduler.js";

function drain<T, R>(s: PartitionScheduler<T, R>): string[] {
  const started: string[] = [];
  for (let r = s.next(); r; r = s.next()) started.push(r.offset);
  return started;
}

describe("PartitionScheduler", () => {
  it("lets go of committed entries, so a long-lived partition holds only what is not committed", () => {
    const s = new PartitionScheduler<string, string>(64);
    for (let offset = 0; offset < 10_000; offset += 1) {
      s.add(String(offset), `k${String(offset % 50)}`, `event ${String(offset)}`);
      for (let r = s.next(); r; r = s.next()) s.complete(r.offset, "done");
      const prefix = s.committable();
      if (prefix && offset % 10 === 9) s.markCommitted(prefix.entries.length);
    }
    expect(s.pending).toBe(0);
    // Every one of the 10,000 was committed: what is still held is a bounded tail, not all of them.
    expect(s.held).toBeLessThanOrEqual(128);
    // Offsets still have to grow after the committed ones are gone.
    expect(() => {
      s.add("9999", null, "again");
    }).toThrow(RangeError);
    s.add("10000", null, "next");
    expect(s.next()?.offset).toBe("10000");
  });

  it("runs different keys at once and the same key one at a time, in offset order", () => {
    const s = new PartitionScheduler<string, number>(10);
    s.add("0", "a", "a0");
    s.add("1", "b", "b0");
    s.add("2", "a", "a1");
    s.add("3", null, "n");
    s.add("4", "a", "a2");
    expect(drain(s)).toEqual(["0", "1", "3"]);
    s.complete("0", 0);
    expect(drain(s)).toEqual(["2"]);
    s.complete("2", 2);
    expect(drain(s)).toEqual(["4"]);
    expect(s.inFlight).toBe(3);
  });

  it("skips entries the shared gate refuses, without breaking key order", () => {
    const s = new PartitionScheduler<string, number>(10);
    s.add("0", "a", "blocked");
    s.add("1", "a", "free");
    s.add("2", "b", "free");
    const gate = (item: string) => item !== "blocked";
    expect(s.next(gate)?.offset).toBe("2");
    expect(s.next(gate)).toBeNull();
    expect(s.next()?.offset).toBe("0");
  });

  it("never exceeds the per-partition limit", () => {
    const s = new PartitionScheduler<string, number>(2);
    for (let i = 0; i < 5; i += 1) s.add(String(i), `k${String(i)}`, "x");
    expect(drain(s)).toEqual(["0", "1"]);
    expect(s.hasRunnable()).toBe(false);
    s.complete("1", 1);
    expect(drain(s)).toEqual(["2"]);
  });

  it("commits only the highest contiguous completed offset", () => {
    const s = new PartitionScheduler<string, string>(10);
    for (const o of ["10", "11", "13"]) s.add(o, `k${o}`, o);
    drain(s);
    s.complete("11", "r11");
    s.complete("13", "r13");
    expect(s.committable()).toBeNull();
    s.complete("10", "r10");
    const prefix = s.committable();
    expect(prefix?.nextOffset).toBe("14");
    expect(prefix?.entries.map((e) => e.result)).toEqual(["r10", "r11", "r13"]);
    expect(s.pending).toBe(3);
    s.markCommitted(3);
    expect(s.pending).toBe(0);
    expect(s.committable()).toBeNull();
  });

  it("stops the prefix at the first entry still running, then continues after a partial commit", () => {
    const s = new PartitionScheduler<string, number>(10);
    for (const o of ["0", "1", "2"]) s.add(o, `k${o}`, o);
    drain(s);
    s.complete("0", 0);
    s.complete("2", 2);
    expect(s.committable()?.nextOffset).toBe("1");
    s.markCommitted(1);
    s.complete("1", 1);
    expect(s.committable()?.nextOffset).toBe("3");
    expect(s.committable()?.entries.map((e) => e.offset)).toEqual(["1", "2"]);
  });

  it("rejects misuse: out-of-order adds, completing what is not running, committing what is not done", () => {
    const s = new PartitionScheduler<string, number>(1);
    s.add("5", "a", "x");
    expect(() => {
      s.add("5", "b", "y");
    }).toThrow(RangeError);
    expect(() => {
      s.complete("5", 1);
    }).toThrow(/not running/);
    expect(() => {
      s.markCommitted(1);
    }).toThrow(/not done/);
    expect(() => new PartitionScheduler(0)).toThrow(RangeError);
  });

  it("keeps per-key order under a random completion order (property check)", () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let committedMidRun = 0;
    for (let round = 0; round < 50; round += 1) {
      const s = new PartitionScheduler<string, number>(1 + Math.floor(random() * 8));
      const keys = new Map<string, string>();
      for (let i = 0; i < 200; i += 1) {
        const key = `k${String(Math.floor(random() * 12))}`;
        keys.set(String(i), key);
        s.add(String(i), key, key);
      }
      const running: string[] = [];
      const lastCompleted = new Map<string, number>();
      let committed = 0;
      // Each prefix committed mid-run: it starts where the last one ended and ends past its entries.
      const prefixes: { got: (string | undefined)[]; from: number; count: number }[] = [];
      while (committed < 200) {
        running.push(...drain(s));
        const pick = running.splice(Math.floor(random() * running.length), 1)[0];
        if (pick === undefined) throw new Error("stuck: nothing running and nothing runnable");
        const key = keys.get(pick) ?? "";
        expect(Number(pick)).toBeGreaterThan(lastCompleted.get(key) ?? -1);
        lastCompleted.set(key, Number(pick));
        s.complete(pick, Number(pick));
        const prefix = s.committable();
        if (prefix && random() < 0.5) {
          const count = prefix.entries.length;
          prefixes.push({ got: [prefix.entries[0]?.offset, prefix.nextOffset], from: committed, count });
          committed += prefix.entries.length;
          s.markCommitted(prefix.entries.length);
        }
        if (running.length === 0 && !s.hasRunnable()) {
          const rest = s.committable();
          if (rest) {
            committed += rest.entries.length;
            s.markCommitted(rest.entries.length);
          }
        }
      }
      expect(s.pending).toBe(0);
      expect(prefixes.map((p) => p.got)).toEqual(
        prefixes.map((p) => [String(p.from), String(p.from + p.count)]),
      );
      committedMidRun += prefixes.length;
    }
    expect(committedMidRun).toBeGreaterThan(0);
  });
});

describe("SlotPool", () => {
  it("bounds acquisitions and notifies on release", () => {
    const pool = new SlotPool(2);
    let released = 0;
    const off = pool.onRelease(() => (released += 1));
    expect(pool.tryAcquire()).toBe(true);
    expect(pool.tryAcquire()).toBe(true);
    expect(pool.tryAcquire()).toBe(false);
    pool.release();
    expect(released).toBe(1);
    expect(pool.inUse).toBe(1);
    off();
    pool.release();
    expect(released).toBe(1);
    expect(() => {
      pool.release();
    }).toThrow();
  });
});

describe("loopFamilyKey", () => {
  it("puts a loop and its reruns under one key per tenant", () => {
    const root = loopFamilyKey({ tenantId: "t", loopId: "loop-1" });
    expect(loopFamilyKey({ tenantId: "t", loopId: "loop-1_r1", rerunOf: "loop-1" })).toBe(root);
    expect(loopFamilyKey({ tenantId: "t", loopId: "loop-1_r2", rerunOf: "loop-1_r1" })).toBe(root);
    expect(loopFamilyKey({ tenantId: "u", loopId: "loop-1" })).not.toBe(root);
    expect(loopFamilyKey({ tenantId: "t", loopId: "loop-2" })).not.toBe(root);
  });
});
