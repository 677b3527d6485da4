import { describe, expect, it } from "vitest";
import { FairSlots, type ReleaseSlot } from "../../../src/adapters/llm/fair-slots.js";

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("FairSlots", () => {
  it("never lets more than `size` holders in, and a release lets the next one in", async () => {
    const slots = new FairSlots(2);
    const granted: string[] = [];
    const releases: ReleaseSlot[] = [];
    for (const name of ["a1", "a2", "a3", "a4"]) {
      void slots.acquire("a").then((release) => {
        granted.push(name);
        releases.push(release);
      });
    }
    await settle();
    expect(granted).toEqual(["a1", "a2"]);
    expect(slots.inUse).toBe(2);
    expect(slots.waiting).toBe(2);
    releases[0]?.();
    releases[0]?.(); // a second call gives nothing back twice
    await settle();
    expect(granted).toEqual(["a1", "a2", "a3"]);
    expect(slots.inUse).toBe(2);
    expect(slots.waiting).toBe(1);
  });

  it("serves waiting tenants in turn: a burst of one tenant does not go ahead of another's request", async () => {
    const slots = new FairSlots(1);
    const first = await slots.acquire("a");
    const order: string[] = [];
    const releases: ReleaseSlot[] = [];
    const take = (key: string, name: string) =>
      void slots.acquire(key).then((release) => {
        order.push(name);
        releases.push(release);
      });
    for (let i = 1; i <= 5; i += 1) take("a", `a${String(i)}`);
    take("b", "b1");
    take("c", "c1");
    take("b", "b2");
    first();
    for (let i = 0; i < 8; i += 1) {
      await settle();
      releases.shift()?.();
    }
    await settle();
    expect(order).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4", "a5"]);
    expect(slots.inUse).toBe(0);
    expect(slots.waiting).toBe(0);
  });

  it("a newcomer does not jump the queue while others wait", async () => {
    const slots = new FairSlots(1);
    const held = await slots.acquire("a");
    const order: string[] = [];
    void slots.acquire("b").then((release) => {
      order.push("b");
      release();
    });
    held();
    void slots.acquire("c").then((release) => {
      order.push("c");
      release();
    });
    await settle();
    expect(order).toEqual(["b", "c"]);
  });

  it("lets a request given up while it waits leave the queue, and gives the slot to the next", async () => {
    const slots = new FairSlots(1);
    const held = await slots.acquire("a");
    const gone = new AbortController();
    const abandoned = slots.acquire("b", gone.signal);
    const order: string[] = [];
    void slots.acquire("c").then((release) => {
      order.push("c");
      release();
    });
    expect(slots.waiting).toBe(2);
    gone.abort();
    await expect(abandoned).rejects.toThrow();
    expect(slots.waiting).toBe(1);
    held();
    await settle();
    expect(order).toEqual(["c"]);
    expect(slots.inUse).toBe(0);
    await expect(slots.acquire("d", gone.signal)).rejects.toThrow();
  });

  it("refuses a size below one", () => {
    expect(() => new FairSlots(0)).toThrow(RangeError);
  });
});
