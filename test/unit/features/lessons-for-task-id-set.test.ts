import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CompactIdSet } from "../../../src/features/lessons/lessons-for-task-id-set.js";

/** The ids of lessons known but not held: a set of fingerprints that answers as a Set of the ids would. */
describe("CompactIdSet", () => {
  it("answers has, add, delete and size as a Set of strings does, through growing and shrinking", () => {
    const compact = new CompactIdSet();
    const plain = new Set<string>();
    const ids = Array.from({ length: 5_000 }, () => randomUUID());
    let seed = 7;
    const next = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed;
    };
    for (let step = 0; step < 40_000; step += 1) {
      const id = ids[next() % ids.length] ?? "";
      // Adds outnumber deletes in the first half, deletes in the second: the table grows, then shrinks.
      const adding = next() % 10 < (step < 20_000 ? 7 : 2);
      if (adding) {
        compact.add(id);
        plain.add(id);
      } else {
        expect(compact.delete(id)).toBe(plain.delete(id));
      }
      if (step % 1_000 === 0) {
        expect(compact.size).toBe(plain.size);
        for (const known of ids.slice(0, 200)) expect(compact.has(known)).toBe(plain.has(known));
      }
    }
    expect(compact.size).toBe(plain.size);
    for (const id of ids) expect(compact.has(id)).toBe(plain.has(id));
    for (const id of ids) compact.delete(id);
    expect(compact.size).toBe(0);
    expect(compact.bytes()).toBeLessThanOrEqual(16 * 8);
  });

  it("tells apart ids that differ in one character, and counts an id added twice once", () => {
    const set = new CompactIdSet();
    set.add("6f1c2d3e-4a5b-4c6d-8e7f-901234567890").add("6f1c2d3e-4a5b-4c6d-8e7f-901234567891");
    set.add("6f1c2d3e-4a5b-4c6d-8e7f-901234567890");
    expect(set.size).toBe(2);
    expect(set.has("6f1c2d3e-4a5b-4c6d-8e7f-901234567892")).toBe(false);
    expect(set.delete("6f1c2d3e-4a5b-4c6d-8e7f-901234567890")).toBe(true);
    expect(set.has("6f1c2d3e-4a5b-4c6d-8e7f-901234567891")).toBe(true);
    expect(set.size).toBe(1);
  });

  it("takes about 16 bytes an id, not a string's", () => {
    const set = new CompactIdSet();
    for (let i = 0; i < 100_000; i += 1) set.add(randomUUID());
    expect(set.size).toBe(100_000);
    expect(set.bytes() / set.size).toBeLessThanOrEqual(32);
    expect(set.bytes() / set.size).toBeGreaterThanOrEqual(16);
  });
});
